/**
 * Environment for onnxruntime, set before its native library starts. Imported (for its side
 * effect) ahead of `onnxruntime-node` by every module that loads it.
 *
 * Why ORT_DISABLE_TELEMETRY=1: onnxruntime's Linux build links a telemetry SDK that, when the
 * first session creates the ORT environment, reads /proc/self/cmdline and matches it with a
 * libstdc++ `std::regex` ("(.*)…"). That regex engine recurses once per character matched, about
 * 300 bytes of stack per character, on the calling thread — for Node, the main thread with its
 * 8 MiB stack. A command line of roughly 30 KB (e.g. `floatscope forward … --ids` with 8,000 ids)
 * therefore overflows the stack and the process dies with SIGSEGV (exit 139) before any model
 * code runs; the same ids passed in-process work because that process's command line is short.
 * With telemetry disabled the SDK is never started, so no command line can crash us (and nothing
 * is sent anywhere: floatscope makes no network calls at run time). Only the value "1" disables
 * it, so a user's ORT_DISABLE_TELEMETRY=0 is overridden on purpose.
 */
process.env.ORT_DISABLE_TELEMETRY = "1";

export const ORT_TELEMETRY_DISABLED = true;
