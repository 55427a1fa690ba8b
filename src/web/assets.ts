/**
 * The stylesheet and the one script of the account pages, served from
 * /assets/ so that the Content-Security-Policy can allow 'self' only.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fff; --muted: #5a5a5a; --line: #d0d0d0; --accent: #0b57d0; --accent-fg: #fff;
  --error: #b3261e; --error-bg: #fce8e6; --ok: #146c2e; --ok-bg: #e6f4ea; --note-bg: #fef7e0; --code-bg: #f3f3f3; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8e8e8; --bg: #161616; --muted: #b0b0b0; --line: #444; --accent: #8ab4f8; --accent-fg: #111;
    --error: #f2b8b5; --error-bg: #3c1f1e; --ok: #a8dab5; --ok-bg: #1e3325; --note-bg: #3a3320; --code-bg: #262626; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { max-width: 48rem; margin: 0 auto; padding: 0 1rem; }
header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; padding-top: 1rem; padding-bottom: .5rem; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; text-decoration: none; color: var(--fg); font-size: 1.15rem; }
header nav { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
header nav form { margin: 0; }
main { padding-top: 1rem; padding-bottom: 2rem; }
main.narrow { max-width: 26rem; }
footer { color: var(--muted); font-size: .875rem; padding-bottom: 2rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; }
a { color: var(--accent); }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
.hint { display: block; color: var(--muted); font-size: .875rem; font-weight: 400; margin: -.1rem 0 .3rem; }
td .hint, p.hint { display: inline; margin: 0; }
p.hint { display: block; margin: .5rem 0; }
.revoked { white-space: nowrap; color: var(--muted); }
input[type=email], input[type=password], input[type=text] { width: 100%; font: inherit; padding: .55rem .6rem; border: 1px solid var(--muted); border-radius: 6px; background: var(--bg); color: var(--fg); }
input[aria-invalid=true] { border-color: var(--error); }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .55rem 1rem; margin-top: 1rem; border-radius: 6px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-fg); cursor: pointer; text-decoration: none; }
button.secondary, .button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--error); border-color: var(--error); color: var(--bg); }
button.link { background: none; border: none; color: var(--accent); padding: 0; margin: 0; font-weight: 400; text-decoration: underline; }
header nav button.link { font-size: 1rem; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.message { padding: .75rem 1rem; border-radius: 6px; margin: 1rem 0; }
.message.error { background: var(--error-bg); color: var(--error); }
.message.ok { background: var(--ok-bg); color: var(--ok); }
.message.note { background: var(--note-bg); }
.field-error { color: var(--error); font-size: .875rem; margin: .25rem 0 0; }
.providers { display: flex; flex-direction: column; gap: .5rem; margin: 1rem 0; }
.providers .button { margin: 0; text-align: center; }
.or { text-align: center; color: var(--muted); margin: 1rem 0 0; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { white-space: nowrap; }
td form { margin: 0; }
td time { white-space: nowrap; }
td button { margin: 0; padding: .3rem .7rem; }
code, pre, .secret { font: .9rem/1.4 ui-monospace, "SFMono-Regular", Menlo, monospace; background: var(--code-bg); border-radius: 4px; }
code { padding: 0 .2em; }
pre { padding: .75rem; white-space: pre-wrap; overflow-wrap: anywhere; margin: .5rem 0; }
.secret { display: block; padding: .75rem; overflow-wrap: anywhere; user-select: all; }
.copy { margin-top: .25rem; }
.inline-form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; }
.inline-form label { margin-top: 0; }
.inline-form div { flex: 1 1 14rem; }
.inline-form button { margin-top: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 34rem) {
  .keys thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .keys tr { display: block; border-bottom: 1px solid var(--line); padding: .5rem 0; }
  .keys td { display: flex; justify-content: space-between; gap: 1rem; border: none; padding: .15rem 0; text-align: right; }
  .keys td::before { content: attr(data-label); color: var(--muted); text-align: left; }
}
`;

/** Copy buttons for the key and the curl example (the page works without it: the text can be selected). */
export const DASHBOARD_SCRIPT = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy);
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select the text and copy it';
    }
  });
}
`;
