"""dkimpy's side of the differential DKIM test (test/interop/dkim-dkimpy.test.ts).

Reads one JSON request on stdin and writes one JSON reply on stdout, so that
one Python process handles a whole batch:

  {"now": SECONDS, "sign": [JOB, ...]}
      JOB: {"message": BASE64, "domain": D, "selector": S, "algorithm": "rsa-sha256",
            "key": {"rsa": PEM} or {"ed25519": BASE64 SEED}, "canonicalize": ["relaxed", "simple"],
            "headers": ["from", ...], "length": false, "identity": null,
            "tags": {TAG: VALUE or null}, "extra": [[TAG, VALUE], ...], "custom": false}
      reply: {"signed": [{"header": BASE64} or {"error": TEXT}, ...]}
  {"now": SECONDS, "zone": {NAME: TXT}, "verify": [{"message": BASE64, "index": N}, ...]}
      reply: {"verified": [{"verdict": "pass" | "fail" | "error", "detail": TEXT}, ...]}

Signing without "tags", "extra" or "custom" is dkimpy's own DKIM.sign(). With them, it
is DKIM.sign()'s steps with the tags changed before dkimpy's gen_header()
makes and signs the header (dkimpy's sign() has no x= and fixes t= to the
clock, and refuses an h= without From), so that t=, x=, l=, i= and other
variants are signed by dkimpy too.

Verdicts: "pass" when DKIM.verify() returns True; "fail" when the body hash
or the signature does not verify; "error" for everything else (a signature
or key record dkimpy refuses, no key, a key too short).
"""
import base64
import json
import logging
import sys
import time

request = json.load(sys.stdin)
NOW = int(request["now"])
# dkimpy reads the clock for t= when signing and for t= and x= when verifying.
time.time = lambda: NOW

import dkim  # noqa: E402
from dkim.canonicalization import CanonicalizationPolicy  # noqa: E402
from dkim.crypto import parse_pem_private_key  # noqa: E402
import nacl.encoding  # noqa: E402
import nacl.signing  # noqa: E402


def sign(job):
    message = base64.b64decode(job["message"])
    algorithm = job["algorithm"].encode()
    domain = job["domain"].encode()
    selector = job["selector"].encode()
    identity = job["identity"].encode() if job.get("identity") else None
    canonicalize = tuple(item.encode() for item in job["canonicalize"])
    headers = [item.encode() for item in job["headers"]]
    key = job["key"]
    privkey = key["rsa"].encode() if "rsa" in key else key["ed25519"].encode()
    signer = dkim.DKIM(message, signature_algorithm=algorithm, linesep=b"\r\n")
    if not job.get("tags") and not job.get("extra") and not job.get("custom"):
        return signer.sign(selector, domain, privkey, identity=identity, canonicalize=canonicalize,
                           include_headers=headers, length=job.get("length", False))

    if "rsa" in key:
        pk = parse_pem_private_key(privkey)
    else:
        pk = nacl.signing.SigningKey(privkey, encoder=nacl.encoding.Base64Encoder)
    policy = CanonicalizationPolicy.from_c_value(b"/".join(canonicalize))
    include = tuple(item.lower() for item in headers)
    signer.include_headers = include
    body = policy.canonicalize_body(signer.body)
    signer.hasher = dkim.HASH_ALGORITHMS[algorithm]
    digest = signer.hasher()
    digest.update(body)
    fields = [
        (b"v", b"1"),
        (b"a", algorithm),
        (b"c", policy.to_c_value()),
        (b"d", domain),
        (b"i", identity or b"@" + domain),
        (b"l", str(len(body)).encode()) if job.get("length") else None,
        (b"q", b"dns/txt"),
        (b"s", selector),
        (b"t", str(NOW).encode()),
        (b"h", b" : ".join(include)),
        (b"bh", base64.b64encode(digest.digest())),
        (b"b", b"0" * 60),
    ]
    fields = [field for field in fields if field]
    for name, value in (job.get("tags") or {}).items():
        name = name.encode()
        at = [index for index, field in enumerate(fields) if field[0] == name]
        if value is None:
            fields = [field for field in fields if field[0] != name]
        elif at:
            fields[at[0]] = (name, value.encode())
        else:
            fields.insert(len(fields) - 3, (name, value.encode()))
    for name, value in job.get("extra") or []:
        fields.insert(len(fields) - 3, (name.encode(), value.encode()))
    return b"DKIM-Signature: " + signer.gen_header(fields, include, policy, b"DKIM-Signature", pk)


class Errors(logging.Handler):
    """Collects what dkimpy logs as errors: the key problems DKIM.verify() turns into False."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def verify(job, zone):
    message = base64.b64decode(job["message"])
    logger = logging.getLogger("dkimpy-differential")
    logger.propagate = False
    logger.setLevel(logging.ERROR)
    errors = Errors()
    logger.handlers = [errors]

    def dnsfunc(name, timeout=5):
        text = zone.get(name.decode("ascii", "replace").rstrip(".").lower())
        return None if text is None else text.encode()

    verifier = dkim.DKIM(message, logger=logger, minkey=1024)
    try:
        if verifier.verify(idx=job["index"], dnsfunc=dnsfunc):
            return {"verdict": "pass", "detail": ""}
    except dkim.ValidationError as error:
        verdict = "fail" if str(error).startswith("body hash mismatch") else "error"
        return {"verdict": verdict, "detail": str(error)}
    except Exception as error:  # DKIMException, and whatever dkimpy lets escape on odd input
        return {"verdict": "error", "detail": "%s: %s" % (type(error).__name__, error)}
    if errors.messages:
        return {"verdict": "error", "detail": "; ".join(errors.messages)}
    return {"verdict": "fail", "detail": "signature did not verify"}


def main():
    if "sign" in request:
        out = []
        for job in request["sign"]:
            try:
                out.append({"header": base64.b64encode(sign(job)).decode()})
            except Exception as error:
                out.append({"error": "%s: %s" % (type(error).__name__, error)})
        json.dump({"signed": out}, sys.stdout)
    else:
        zone = {name.lower(): text for name, text in request["zone"].items()}
        json.dump({"verified": [verify(job, zone) for job in request["verify"]]}, sys.stdout)


main()
