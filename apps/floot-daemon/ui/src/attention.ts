/**
 * How many sessions wait on a person, where a glance finds it: "(2) " before the page's title, and a
 * badge on the tab's icon (drawn on a canvas: the page's CSP takes `data:` images).
 */
export class Attention {
  readonly #title: string;
  readonly #icon: HTMLLinkElement;
  readonly #plainIcon: string;
  #shown: string | undefined;

  constructor(title: string) {
    this.#title = title;
    this.#icon =
      document.querySelector<HTMLLinkElement>('link[rel="icon"]') ?? document.createElement("link");
    if (!this.#icon.isConnected) {
      this.#icon.rel = "icon";
      document.head.append(this.#icon);
    }
    this.#plainIcon = this.#icon.href;
    this.show(0);
  }

  /** `count` sessions wait (`more`: and there are more than were counted). */
  show(count: number, more = false): void {
    const label = count === 0 ? "" : `${count}${more ? "+" : ""}`;
    document.title = label === "" ? this.#title : `(${label}) ${this.#title}`;
    if (label === this.#shown) return;
    this.#shown = label;
    this.#icon.dataset.waiting = label === "" ? "0" : label;
    this.#icon.href = label === "" ? this.#plainIcon : badgeIcon(label);
  }

  /** The page is left: its plain icon back. */
  dispose(): void {
    this.#icon.href = this.#plainIcon;
    delete this.#icon.dataset.waiting;
  }
}

/** A 32 px icon: the brand's diamond, and a red disc with `label` in its corner. */
function badgeIcon(label: string): string {
  const canvas = document.createElement("canvas");
  canvas.width = 32;
  canvas.height = 32;
  const context = canvas.getContext("2d");
  if (!context) return "data:,";
  context.fillStyle = "#3656d4";
  context.beginPath();
  context.moveTo(13, 2);
  context.lineTo(24, 13);
  context.lineTo(13, 24);
  context.lineTo(2, 13);
  context.closePath();
  context.fill();
  context.fillStyle = "#d92d20";
  context.beginPath();
  context.arc(21, 21, 11, 0, Math.PI * 2);
  context.fill();
  context.fillStyle = "#ffffff";
  context.font = `bold ${label.length > 2 ? 11 : 15}px sans-serif`;
  context.textAlign = "center";
  context.textBaseline = "middle";
  context.fillText(label.length > 3 ? "99+" : label, 21, 22);
  return canvas.toDataURL("image/png");
}
