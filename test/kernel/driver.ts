/**
 * A minimal Jupyter client in pure Node (zeromq, which tslab already depends on): start a kernel
 * exactly as an installed kernelspec says, sign messages with HMAC-SHA256, execute code, and
 * collect the iopub messages a cell produced. Used by the kernel integration tests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Dealer, Subscriber } from "zeromq";

export interface JupyterMessage {
  header: { msg_id: string; msg_type: string; session: string; [k: string]: unknown };
  parent_header: { msg_id?: string; [k: string]: unknown };
  metadata: Record<string, unknown>;
  content: Record<string, any>;
}

export interface ExecuteResult {
  reply: JupyterMessage;
  /** iopub messages whose parent is this request, in arrival order (status messages included). */
  iopub: JupyterMessage[];
}

export interface KernelSpecFile {
  argv: string[];
  env?: Record<string, string>;
  display_name: string;
  language: string;
}

const DELIM = "<IDS|MSG>";

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

/** `${VAR}` substitution like jupyter_client's provisioner (unknown names are left as they are). */
function substituteEnv(v: string): string {
  return v.replace(/\$\{(\w+)\}/g, (m, name: string) => process.env[name] ?? m);
}

export class KernelClient {
  readonly stderr: string[] = [];
  readonly stdout: string[] = [];
  private readonly session = randomUUID();
  private readonly iopubLog: JupyterMessage[] = [];
  private readonly waiters = new Set<() => void>();
  private closed = false;
  badSignatures = 0;

  private constructor(
    private readonly proc: ChildProcess,
    private readonly key: string,
    private readonly shell: Dealer,
    private readonly control: Dealer,
    private readonly iopub: Subscriber,
    private readonly tmp: string,
  ) {}

  /**
   * Start the kernel described by `kernelJsonPath` with `cwd` as its working directory (Jupyter
   * uses the notebook's folder) and wait until it answers kernel_info_request.
   */
  static async start(kernelJsonPath: string, cwd: string, timeoutMs = 60_000): Promise<KernelClient> {
    const spec = JSON.parse(readFileSync(kernelJsonPath, "utf8")) as KernelSpecFile;
    const tmp = mkdtempSync(join(tmpdir(), "floatscope-kernel-"));
    const key = randomBytes(16).toString("hex");
    const [shellPort, iopubPort, stdinPort, controlPort, hbPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const connFile = join(tmp, "connection.json");
    writeFileSync(
      connFile,
      JSON.stringify({
        transport: "tcp",
        ip: "127.0.0.1",
        key,
        signature_scheme: "hmac-sha256",
        shell_port: shellPort,
        iopub_port: iopubPort,
        stdin_port: stdinPort,
        control_port: controlPort,
        hb_port: hbPort,
        kernel_name: "floatscope",
      }),
    );
    const resourceDir = dirname(kernelJsonPath);
    const argv = spec.argv.map((a) => a.replaceAll("{connection_file}", connFile).replaceAll("{resource_dir}", resourceDir));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(spec.env ?? {})) env[k] = substituteEnv(v);
    const proc = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });

    const shell = new Dealer();
    const control = new Dealer();
    const iopub = new Subscriber();
    shell.connect(`tcp://127.0.0.1:${shellPort}`);
    control.connect(`tcp://127.0.0.1:${controlPort}`);
    iopub.connect(`tcp://127.0.0.1:${iopubPort}`);
    iopub.subscribe();
    const client = new KernelClient(proc, key, shell, control, iopub, tmp);
    proc.stdout!.on("data", (d: Buffer) => client.stdout.push(d.toString()));
    proc.stderr!.on("data", (d: Buffer) => client.stderr.push(d.toString()));
    void client.pumpIopub();

    const exited = new Promise<never>((_, reject) =>
      proc.once("exit", (code) => reject(new Error(`kernel exited early (code ${code}):\n${client.stderr.join("")}`))),
    );
    exited.catch(() => undefined);
    // The kernel binds its sockets after tslab warms its TypeScript converter (a few seconds);
    // kernel_info_request is answered once it is up. Retry so iopub is surely connected too.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (Date.now() > deadline) {
        client.kill();
        throw new Error(`kernel did not answer kernel_info_request within ${timeoutMs} ms:\n${client.stderr.join("")}`);
      }
      const id = await client.send(shell, "kernel_info_request", {});
      let reply: JupyterMessage | null;
      try {
        reply = await Promise.race([client.recvReply(shell, id, 2000), exited]);
      } catch (e) {
        client.kill();
        throw e;
      }
      if (reply && client.iopubLog.some((m) => m.parent_header.msg_id === id)) return client;
    }
  }

  private sign(parts: string[]): string {
    const h = createHmac("sha256", this.key);
    for (const p of parts) h.update(p);
    return h.digest("hex");
  }

  private async send(sock: Dealer, msgType: string, content: Record<string, unknown>): Promise<string> {
    const msgId = randomUUID();
    const header = JSON.stringify({
      msg_id: msgId,
      msg_type: msgType,
      session: this.session,
      username: "test",
      date: new Date().toISOString(),
      version: "5.3",
    });
    const parts = [header, "{}", "{}", JSON.stringify(content)];
    await sock.send([DELIM, this.sign(parts), ...parts]);
    return msgId;
  }

  /** Parse and verify one multipart message (any identity frames before the delimiter are skipped). */
  private parse(frames: Buffer[]): JupyterMessage | null {
    const i = frames.findIndex((f) => f.toString() === DELIM);
    if (i < 0) return null;
    const [sig, header, parent, metadata, content] = frames.slice(i + 1, i + 6).map((f) => f.toString());
    if (this.sign([header, parent, metadata, content]) !== sig) {
      this.badSignatures++;
      return null;
    }
    return { header: JSON.parse(header), parent_header: JSON.parse(parent), metadata: JSON.parse(metadata), content: JSON.parse(content) };
  }

  private async pumpIopub(): Promise<void> {
    try {
      for await (const frames of this.iopub) {
        const msg = this.parse(frames as Buffer[]);
        if (msg) this.iopubLog.push(msg);
        for (const w of this.waiters) w();
      }
    } catch {
      // socket closed
    }
  }

  private async recvReply(sock: Dealer, msgId: string, timeoutMs: number): Promise<JupyterMessage | null> {
    const deadline = Date.now() + timeoutMs;
    sock.receiveTimeout = 200;
    while (Date.now() < deadline) {
      let frames: Buffer[];
      try {
        frames = (await sock.receive()) as Buffer[];
      } catch {
        continue; // receive timeout; loop until our deadline
      }
      const msg = this.parse(frames);
      if (msg && msg.parent_header.msg_id === msgId) return msg;
    }
    return null;
  }

  /** Execute `code`; resolves when both the execute_reply and the iopub "idle" status have arrived. */
  async execute(code: string, timeoutMs = 60_000): Promise<ExecuteResult> {
    const id = await this.send(this.shell, "execute_request", {
      code,
      silent: false,
      store_history: true,
      user_expressions: {},
      allow_stdin: false,
      stop_on_error: true,
    });
    const reply = await this.recvReply(this.shell, id, timeoutMs);
    if (!reply) throw new Error(`no execute_reply within ${timeoutMs} ms for:\n${code}\nkernel stderr:\n${this.stderr.join("")}`);
    const idle = () =>
      this.iopubLog.some((m) => m.parent_header.msg_id === id && m.header.msg_type === "status" && m.content.execution_state === "idle");
    if (!idle()) {
      await new Promise<void>((res, rej) => {
        const t = setTimeout(() => {
          this.waiters.delete(w);
          rej(new Error("no idle status on iopub"));
        }, 10_000);
        const w = () => {
          if (idle()) {
            clearTimeout(t);
            this.waiters.delete(w);
            res();
          }
        };
        this.waiters.add(w);
      });
    }
    if (reply.content.status === "error") {
      // After a failed cell tslab aborts whatever arrives in the next 200 ms (its execQueue.reset(200)).
      await new Promise((r) => setTimeout(r, 300));
    }
    return { reply, iopub: this.iopubLog.filter((m) => m.parent_header.msg_id === id) };
  }

  /** All iopub messages received so far (including ones sent after a cell finished). */
  get allIopub(): readonly JupyterMessage[] {
    return this.iopubLog;
  }

  /** Ask the kernel to shut down over the control channel, then make sure the process is gone. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    try {
      await this.send(this.control, "shutdown_request", { restart: false });
      await Promise.race([new Promise((r) => this.proc.once("exit", r)), new Promise((r) => setTimeout(r, 3000))]);
    } finally {
      this.kill();
    }
  }

  private kill(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
    this.shell.close();
    this.control.close();
    this.iopub.close();
    rmSync(this.tmp, { recursive: true, force: true });
  }
}
