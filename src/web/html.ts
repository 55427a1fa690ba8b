/**
 * HTML built by tagged templates: every interpolated value is escaped
 * unless it is already Html (made by `html` itself), so a page cannot carry
 * a caller's text as markup. A template engine would add a second language
 * and a loader for six small pages; this is the whole of what they need.
 */
export class Html {
  constructor(readonly text: string) {}
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === null || part === undefined || part === false) return '';
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let text = strings[0]!;
  for (let index = 0; index < values.length; index++) text += render(values[index]!) + strings[index + 1]!;
  return new Html(text);
}
