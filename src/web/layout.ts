import { html, type Html } from './html.js';

export interface Frame {
  title: string;
  /** The CSRF token of the forms of this page (the sign-out button's too). */
  csrf: string;
  /** The signed-in account's address, or null. */
  signedIn: string | null;
  /** A narrow column for the forms of one purpose (sign-in, sign-up). */
  narrow?: boolean;
  /** Pages with copy buttons load the dashboard script. */
  script?: boolean;
}

/** The page around every account page: header with the way in or out, the content, a footer. */
export function page(frame: Frame, content: Html): string {
  const nav = frame.signedIn
    ? html`<a href="/dashboard">Dashboard</a>
        <form method="post" action="/logout"><input type="hidden" name="_csrf" value="${frame.csrf}"><button class="link" type="submit">Log out</button></form>`
    : html`<a href="/login">Log in</a> <a href="/signup">Sign up</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${frame.title} &middot; netintel</title>
<link rel="stylesheet" href="/assets/netintel.css">
${frame.script ? html`<script src="/assets/dashboard.js" defer></script>` : ''}
</head>
<body>
<header>
  <a class="brand" href="/">netintel</a>
  <nav aria-label="Account">${nav} <a href="/docs">API docs</a></nav>
</header>
<main id="main"${frame.narrow ? html` class="narrow"` : ''}>
${content}
</main>
<footer><p>netintel: IP, DNS and e-mail diagnostics over an HTTP API.</p></footer>
</body>
</html>
`.text;
}

/** A message box; errors are announced to screen readers as they appear. */
export function message(kind: 'error' | 'ok' | 'note', text: Html | string): Html {
  return kind === 'error' ? html`<div class="message error" role="alert">${text}</div>` : html`<div class="message ${kind}" role="status">${text}</div>`;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** A labelled input with its hint and error tied to it for assistive technology. */
export function field(options: {
  name: string;
  label: string;
  type: 'email' | 'password' | 'text';
  autocomplete: string;
  value?: string;
  hint?: string;
  error?: string | null;
  required?: boolean;
  autofocus?: boolean;
  maxlength?: number;
}): Html {
  const id = `field-${options.name}`;
  const described = [options.hint ? `${id}-hint` : '', options.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  // The hint follows the label rather than sitting in it: the label is the field's name, the hint its description.
  return html`<label for="${id}">${options.label}</label>${options.hint ? html`<span class="hint" id="${id}-hint">${options.hint}</span>` : ''}
<input id="${id}" name="${options.name}" type="${options.type}" autocomplete="${options.autocomplete}"${options.value !== undefined ? html` value="${options.value}"` : ''}${
    options.required !== false ? html` required` : ''
  }${options.autofocus ? html` autofocus` : ''}${options.maxlength ? html` maxlength="${options.maxlength}"` : ''}${described ? html` aria-describedby="${described}"` : ''}${
    options.error ? html` aria-invalid="true"` : ''
  }>
${options.error ? html`<p class="field-error" id="${id}-error">${options.error}</p>` : ''}`;
}
