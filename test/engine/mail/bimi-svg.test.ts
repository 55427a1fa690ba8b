/** The SVG Tiny PS basics of a BIMI logo, and the Mark Certificate reader. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSvgIndicator } from '../../../src/engine/mail/bimi-svg.js';
import { readMarkCertificate } from '../../../src/engine/mail/bimi-certificate.js';
import { createCertificateAuthority, issueCertificate } from '../../support/smtp-servers.js';

const VALID_SVG = [
  '<?xml version="1.0" encoding="UTF-8"?>',
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64">',
  '  <title>Example Brand</title>',
  '  <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>',
  '  <rect width="64" height="64" fill="url(#g)"/>',
  '  <circle cx="32" cy="32" r="20" fill="#c00"/>',
  '</svg>',
].join('\n');

const ids = (text: string) => checkSvgIndicator(text).problems.map((problem) => problem.id);

describe('checkSvgIndicator', () => {
  it('passes a valid SVG Tiny PS logo and reads its facts', () => {
    const checked = checkSvgIndicator(VALID_SVG);
    expect(checked.problems).toEqual([]);
    expect(checked.facts).toEqual({
      root: 'svg',
      base_profile: 'tiny-ps',
      version: '1.2',
      title: 'Example Brand',
      view_box: '0 0 64 64',
      view_box_size: { width: 64, height: 64 },
    });
  });

  it('finds script, event handlers and javascript: links', () => {
    expect(ids(VALID_SVG.replace('<circle', '<script>alert(1)</script><circle'))).toEqual(['bimi_svg_script']);
    expect(ids(VALID_SVG.replace('<circle', '<circle onload="x()"'))).toEqual(['bimi_svg_script']);
    expect(ids(VALID_SVG.replace('<circle', '<a xlink:href="javascript:x()"><text>t</text></a><circle'))).toEqual(['bimi_svg_script']);
  });

  it('finds a missing or empty title, a wrong profile, version and namespace', () => {
    expect(ids(VALID_SVG.replace('<title>Example Brand</title>', ''))).toEqual(['bimi_svg_no_title']);
    expect(ids(VALID_SVG.replace('Example Brand', '  '))).toEqual(['bimi_svg_no_title']);
    expect(ids(VALID_SVG.replace('baseProfile="tiny-ps" ', ''))).toEqual(['bimi_svg_base_profile']);
    expect(ids(VALID_SVG.replace('tiny-ps', 'tiny').replace('version="1.2"', 'version="1.1"'))).toEqual(['bimi_svg_base_profile', 'bimi_svg_version']);
    expect(ids(VALID_SVG.replace('xmlns="http://www.w3.org/2000/svg"', ''))).toEqual(['bimi_svg_namespace']);
  });

  it('finds animation, raster images and references outside the document', () => {
    expect(ids(VALID_SVG.replace('r="20" fill="#c00"/>', 'r="20"><animate attributeName="r" to="30"/></circle>'))).toEqual(['bimi_svg_animation']);
    expect(ids(VALID_SVG.replace('<circle', '<image href="data:image/png;base64,AAAA" width="1" height="1"/><circle'))).toEqual(['bimi_svg_prohibited_element', 'bimi_svg_external_reference']);
    expect(ids(VALID_SVG.replace('<circle', '<use xlink:href="https://cdn.example/logo.svg#a"/><circle'))).toEqual(['bimi_svg_external_reference']);
    expect(ids(VALID_SVG.replace('fill="#c00"', 'fill="url(https://cdn.example/p.svg#x)"'))).toEqual(['bimi_svg_external_reference']);
    expect(ids(VALID_SVG.replace('<circle', '<style>@import url(https://cdn.example/a.css);</style><circle'))).toEqual(['bimi_svg_external_reference']);
    // A reference inside the document is fine.
    expect(ids(VALID_SVG.replace('<circle', '<use xlink:href="#g"/><circle'))).toEqual([]);
  });

  it('wants a square viewBox', () => {
    expect(ids(VALID_SVG.replace('0 0 64 64', '0 0 64 32'))).toEqual(['bimi_svg_not_square']);
    expect(ids(VALID_SVG.replace('0 0 64 64', '0,0,100,100'))).toEqual([]);
    expect(ids(VALID_SVG.replace(' viewBox="0 0 64 64"', ''))).toEqual(['bimi_svg_no_viewbox']);
    expect(ids(VALID_SVG.replace('0 0 64 64', '0 0 wide'))).toEqual(['bimi_svg_viewbox_invalid']);
  });

  it('says when the text is not XML, not SVG, or declares entities', () => {
    expect(ids('<svg><g></svg>')).toEqual(['bimi_svg_not_xml']);
    expect(ids('')).toEqual(['bimi_svg_not_xml']);
    expect(ids('<svg:svg xmlns:svg="http://www.w3.org/1999/xhtml"/>')).toContain('bimi_svg_namespace');
    expect(ids('<html><title>x</title></html>')).toEqual(['bimi_svg_not_svg']);
    expect(ids(`<!DOCTYPE svg [<!ENTITY a "aaaa">]>${VALID_SVG.replace(/^<\?xml[^>]*>\n/, '')}`)).toContain('bimi_svg_doctype');
  });

  it('never throws on any text, and every problem has an id and a citation', () => {
    const fragment = fc.constantFrom('<svg', '>', '</svg>', '<title>', '</title>', 'baseProfile="tiny-ps"', ' version="1.2"', '<script>', '<!DOCTYPE', '&', '"', 'href="http://x"', '<![CDATA[', ']]>', '<?xml', '?>', ' ');
    const text = fc.oneof(fc.string({ maxLength: 300 }), fc.array(fc.oneof(fragment, fc.string({ maxLength: 5 })), { maxLength: 40 }).map((parts) => parts.join('')));
    fc.assert(
      fc.property(text, (input) => {
        const checked = checkSvgIndicator(input);
        for (const problem of checked.problems) {
          expect(problem.id).toMatch(/^bimi_svg_[a-z_]+$/);
          expect(problem.rfc).toMatch(/draft-\d+ §/);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('readMarkCertificate', () => {
  it('reads the first certificate of a PEM chain and lists its extensions', () => {
    const ca = createCertificateAuthority('Mark CA');
    const leaf = issueCertificate({ commonName: 'brand.example', issuer: ca, organisation: 'Example Brand' });
    const read = readMarkCertificate(`${leaf.cert}${ca.cert}`);
    expect(read).toMatchObject({ certificates: 2, subject: 'O=Example Brand, CN=brand.example', issuer: 'O=netintel tests, CN=Mark CA', logotype: false });
    expect(read!.extensions).toEqual(['2.5.29.17', '2.5.29.19', '2.5.29.37']);
    expect(read!.valid_to).toBe(new Date(leaf.x509.validTo).toISOString());
  });

  it('gives null for text without a readable certificate', () => {
    expect(readMarkCertificate('')).toBeNull();
    expect(readMarkCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toBeNull();
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        expect(readMarkCertificate(text)).toBeNull();
      }),
    );
  });
});
