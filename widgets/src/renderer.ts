/**
 * The Lumino side: one renderer class per view family, each a thin `Widget` that hands the JSON
 * payload to a DOM view and shows a readable error instead of a blank cell when the payload is
 * bad. Re-rendering (update_display_data) disposes the previous view first.
 */
import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import { Widget } from "@lumino/widgets";
import { errorBox } from "./dom.js";
import type { FigureDescription, ScrubberPayload } from "./protocol.js";
import { ScrubberView } from "./scrubber/view.js";

/** Anything a renderer can mount: a view with a dispose(). */
export interface MountedView {
  dispose(): void;
  /** Views that follow the output area's width. */
  resize?(): void;
}

export type Mount = (host: HTMLElement, payload: ScrubberPayload | FigureDescription) => MountedView | Promise<MountedView>;

export class FloatscopeRenderer extends Widget implements IRenderMime.IRenderer {
  private view: MountedView | null = null;

  constructor(
    private readonly mimeType: string,
    private readonly mount: Mount,
  ) {
    super();
    this.addClass("fs-renderer");
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.view?.dispose();
    this.view = null;
    this.node.textContent = "";
    const payload = model.data[this.mimeType] as unknown as ScrubberPayload | FigureDescription;
    try {
      this.view = await this.mount(this.node, payload);
    } catch (e) {
      this.node.textContent = "";
      this.node.appendChild(errorBox(e instanceof Error ? e.message : String(e)));
    }
  }

  protected override onResize(): void {
    this.view?.resize?.();
  }

  protected override onAfterShow(): void {
    this.view?.resize?.();
  }

  override dispose(): void {
    if (this.isDisposed) return;
    this.view?.dispose();
    this.view = null;
    super.dispose();
  }
}

export const mountScrubber: Mount = (host, payload) => new ScrubberView(host, payload as ScrubberPayload);
