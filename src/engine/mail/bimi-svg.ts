import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Severity } from '../findings.js';

/** How findings cite the two drafts. */
export const BIMI_CITE = 'BIMI draft-10';
export const SVG_PS_CITE = 'SVG Tiny PS draft-08';

/** What the SVG Indicator says about itself. */
export interface SvgFacts {
  /** Local name of the root element. */
  root: string | null;
  base_profile: string | null;
  version: string | null;
  title: string | null;
  view_box: string | null;
  /** Width and height of the viewBox when it parses. */
  view_box_size: { width: number; height: number } | null;
}

export interface SvgProblem {
  id: string;
  severity: Severity;
  message: string;
  rfc: string;
  evidence: Record<string, unknown>;
}

export interface SvgCheck {
  facts: SvgFacts;
  problems: SvgProblem[];
}

const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';
const SCRIPT_ELEMENTS = new Set(['script', 'handler', 'listener']);
const ANIMATION_ELEMENTS = new Set(['animate', 'animatemotion', 'animatecolor', 'animatetransform', 'set', 'discard']);
/** Elements SVG Tiny PS leaves out besides script and animation: raster and foreign content. */
const OTHER_PROHIBITED = new Set(['image', 'foreignobject', 'video', 'audio', 'iframe']);
/** How many of each kind of problem are listed; the count says the rest. */
const EXAMPLES = 5;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // No entity is expanded: a DOCTYPE with entities is itself a finding.
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  commentPropName: '#comment',
});

type XmlNode = Record<string, unknown>;

/**
 * Checks an SVG Indicator against the basics of SVG Tiny PS (the BIMI SVG
 * profile): well-formed XML, root `<svg>` in the SVG namespace with
 * baseProfile="tiny-ps" and version="1.2", a non-empty `<title>` child, no
 * script or event handlers, no animation, no raster or foreign content, no
 * reference outside the document, a square viewBox. Never throws: any text
 * gives findings.
 */
export function checkSvgIndicator(text: string): SvgCheck {
  const facts: SvgFacts = { root: null, base_profile: null, version: null, title: null, view_box: null, view_box_size: null };
  const problems: SvgProblem[] = [];
  const add = (id: string, severity: Severity, message: string, rfc: string, evidence: Record<string, unknown> = {}) => problems.push({ id, severity, message, rfc, evidence });

  if (/<!DOCTYPE|<!ENTITY/i.test(text)) {
    add('bimi_svg_doctype', 'error', 'The SVG declares a DOCTYPE or entities; SVG Tiny PS documents carry none (and receivers refuse entity expansion)', `${SVG_PS_CITE} §2`);
  }
  let validation: ReturnType<typeof XMLValidator.validate>;
  try {
    validation = XMLValidator.validate(text);
  } catch (error) {
    validation = { err: { code: 'InvalidXml', msg: error instanceof Error ? error.message : String(error), line: 0, col: 0 } };
  }
  if (validation !== true) {
    const { msg, line, col } = validation.err;
    add('bimi_svg_not_xml', 'error', `The SVG is not well-formed XML: ${msg} (line ${line}, column ${col})`, `${BIMI_CITE} §7.6`, { line, col });
    return { facts, problems };
  }
  let nodes: XmlNode[];
  try {
    nodes = parser.parse(text) as XmlNode[];
  } catch (error) {
    add('bimi_svg_not_xml', 'error', `The SVG could not be read as XML: ${error instanceof Error ? error.message : String(error)}`, `${BIMI_CITE} §7.6`);
    return { facts, problems };
  }
  const root = nodes.find((node) => elementName(node) !== null && !elementName(node)!.startsWith('?'));
  if (!root) {
    add('bimi_svg_not_svg', 'error', 'The document has no root element', `${BIMI_CITE} §7.6`);
    return { facts, problems };
  }
  const rootName = elementName(root)!;
  facts.root = localName(rootName);
  if (facts.root.toLowerCase() !== 'svg') {
    add('bimi_svg_not_svg', 'error', `The root element is <${rootName}>, not <svg>`, `${BIMI_CITE} §7.6`, { root: rootName });
    return { facts, problems };
  }
  const attributes = attributesOf(root);
  facts.base_profile = attributes['baseProfile'] ?? null;
  facts.version = attributes['version'] ?? null;
  facts.view_box = attributes['viewBox'] ?? null;
  const namespace = rootName.includes(':') ? attributes[`xmlns:${rootName.split(':')[0]}`] : attributes['xmlns'];
  if (namespace !== SVG_NAMESPACE) {
    add('bimi_svg_namespace', 'error', `The root <svg> is not in the SVG namespace (${SVG_NAMESPACE})`, `${SVG_PS_CITE} §2`, { namespace: namespace ?? null });
  }
  if (facts.base_profile !== 'tiny-ps') {
    add('bimi_svg_base_profile', 'error', `base_profile is ${quoted(facts.base_profile)}; SVG Tiny PS requires baseProfile="tiny-ps"`, `${SVG_PS_CITE} §2`, { base_profile: facts.base_profile });
  }
  if (facts.version !== '1.2') {
    add('bimi_svg_version', 'error', `version is ${quoted(facts.version)}; SVG Tiny PS requires version="1.2"`, `${SVG_PS_CITE} §2`, { version: facts.version });
  }
  const children = childrenOf(root);
  const titleNode = children.find((node) => localName(elementName(node) ?? '').toLowerCase() === 'title');
  if (titleNode) facts.title = textOf(titleNode).trim();
  if (!titleNode || facts.title === '') {
    add('bimi_svg_no_title', 'error', titleNode ? 'The <title> of the SVG is empty; it must name the brand' : 'The SVG has no <title> child of <svg>; SVG Tiny PS requires one naming the brand', `${SVG_PS_CITE} §2`);
  }
  checkViewBox(facts, add);

  const found = { script: [] as string[], animation: [] as string[], prohibited: [] as string[], external: [] as string[] };
  walk(root, (name, attrs, text) => {
    const local = localName(name).toLowerCase();
    if (SCRIPT_ELEMENTS.has(local)) found.script.push(`<${name}>`);
    else if (ANIMATION_ELEMENTS.has(local)) found.animation.push(`<${name}>`);
    else if (OTHER_PROHIBITED.has(local)) found.prohibited.push(`<${name}>`);
    for (const [attribute, value] of Object.entries(attrs)) {
      const attributeLocal = localName(attribute).toLowerCase();
      if (/^on/.test(attributeLocal)) found.script.push(`${attribute}= on <${name}>`);
      else if (/^\s*javascript:/i.test(value)) found.script.push(`${attribute}="${value.slice(0, 40)}" on <${name}>`);
      else if (attributeLocal === 'href' && !/^\s*#/.test(value) && value.trim() !== '') found.external.push(`${attribute}="${value.slice(0, 80)}" on <${name}>`);
      else if (/url\(\s*['"]?\s*(?!#)[^)\s]/i.test(value)) found.external.push(`${attribute}="${value.slice(0, 80)}" on <${name}>`);
    }
    if (local === 'style' && (/@import|url\(\s*['"]?\s*(?!#)[^)\s]/i.test(text))) found.external.push(`<${name}> ${text.trim().slice(0, 80)}`);
  });
  if (found.script.length > 0) {
    add('bimi_svg_script', 'error', `The SVG holds script: ${examples(found.script)}`, `${SVG_PS_CITE} §2; ${BIMI_CITE} §8.7`, { items: found.script.slice(0, EXAMPLES), count: found.script.length });
  }
  if (found.animation.length > 0) {
    add('bimi_svg_animation', 'error', `The SVG holds animation: ${examples(found.animation)}`, `${SVG_PS_CITE} §2`, { items: found.animation.slice(0, EXAMPLES), count: found.animation.length });
  }
  if (found.prohibited.length > 0) {
    add('bimi_svg_prohibited_element', 'error', `The SVG holds elements SVG Tiny PS leaves out: ${examples(found.prohibited)}`, `${SVG_PS_CITE} §2`, {
      items: found.prohibited.slice(0, EXAMPLES),
      count: found.prohibited.length,
    });
  }
  if (found.external.length > 0) {
    add('bimi_svg_external_reference', 'error', `The SVG refers outside itself: ${examples(found.external)}`, `${SVG_PS_CITE} §2`, { items: found.external.slice(0, EXAMPLES), count: found.external.length });
  }
  return { facts, problems };
}

function checkViewBox(facts: SvgFacts, add: (id: string, severity: Severity, message: string, rfc: string, evidence?: Record<string, unknown>) => void): void {
  if (facts.view_box === null) {
    add('bimi_svg_no_viewbox', 'warning', 'The SVG has no viewBox, so receivers cannot tell that it is square', `${SVG_PS_CITE} §2`);
    return;
  }
  const numbers = facts.view_box.trim().split(/[\s,]+/).map(Number);
  if (numbers.length !== 4 || numbers.some((value) => !Number.isFinite(value)) || numbers[2]! <= 0 || numbers[3]! <= 0) {
    add('bimi_svg_viewbox_invalid', 'error', `viewBox="${facts.view_box}" is not four numbers with a positive width and height`, `${SVG_PS_CITE} §2`, { view_box: facts.view_box });
    return;
  }
  const [, , width, height] = numbers as [number, number, number, number];
  facts.view_box_size = { width, height };
  if (Math.abs(width - height) > 1e-9 * Math.max(width, height)) {
    add('bimi_svg_not_square', 'error', `The viewBox is ${width} by ${height}; BIMI logos must be square`, `${SVG_PS_CITE} §2`, { width, height });
  }
}

function elementName(node: XmlNode): string | null {
  for (const key of Object.keys(node)) {
    if (key !== ':@' && key !== '#text' && key !== '#comment') return key;
  }
  return null;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon >= 0 ? name.slice(colon + 1) : name;
}

function attributesOf(node: XmlNode): Record<string, string> {
  const attrs = node[':@'];
  if (attrs === null || typeof attrs !== 'object') return {};
  return Object.fromEntries(Object.entries(attrs as Record<string, unknown>).map(([key, value]) => [key, typeof value === 'string' ? value : String(value)]));
}

function childrenOf(node: XmlNode): XmlNode[] {
  const name = elementName(node);
  const children = name === null ? undefined : node[name];
  return Array.isArray(children) ? (children as XmlNode[]) : [];
}

function textOf(node: XmlNode): string {
  return childrenOf(node)
    .map((child) => (typeof child['#text'] === 'string' ? child['#text'] : elementName(child) !== null ? textOf(child) : ''))
    .join('');
}

/** Visits every element under and including `node`, without recursion (a deep document cannot overflow the stack). */
function walk(node: XmlNode, visit: (name: string, attributes: Record<string, string>, text: string) => void): void {
  const stack: XmlNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const name = elementName(current);
    if (name === null) continue;
    const children = childrenOf(current);
    const text = children.map((child) => (typeof child['#text'] === 'string' ? child['#text'] : '')).join('');
    visit(name, attributesOf(current), text);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

function examples(items: readonly string[]): string {
  const shown = items.slice(0, EXAMPLES).join(', ');
  return items.length > EXAMPLES ? `${shown} and ${items.length - EXAMPLES} more` : shown;
}

function quoted(value: string | null): string {
  return value === null ? 'missing' : `"${value}"`;
}
