/** Tiny DOM helpers: element creation with properties and children, and lookups that must succeed. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, unknown>> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), v as EventListener);
    else if (k === 'class') el.className = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    // Properties (checked, value, textContent...) are set as such; everything else is an attribute.
    else if (k in el && (typeof v !== 'string' || k === 'textContent' || k === 'value')) {
      // As an assignment would: a property that cannot be set is a mistake in the caller.
      if (!Reflect.set(el, k, v)) throw new TypeError(`cannot set ${k} on <${tag}>`);
    } else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

export function $<T extends HTMLElement = HTMLElement>(
  selector: string,
  root: ParentNode = document,
): T {
  const el = root.querySelector<T>(selector);
  if (el === null) throw new Error(`missing element ${selector}`);
  return el;
}

/** Offers text as a file download. */
export function download(filename: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Copies text; falls back to a selection and execCommand where the clipboard API is refused. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = h('textarea', { value: text });
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

/**
 * A host name that wraps only after its dots (`www.` / `example.` / `com`), never mid-label:
 * a zero-width break opportunity after every dot; the CSS class `host` keeps the rest whole.
 */
export function hostParts(host: string): (string | Node)[] {
  const labels = host.split('.');
  return labels.flatMap((label, i) =>
    i < labels.length - 1 ? [`${label}.`, document.createElement('wbr')] : [label],
  );
}

export function hostNode(host: string): HTMLSpanElement {
  return h('span', { class: 'host' }, ...hostParts(host));
}
