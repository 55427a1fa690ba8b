"""dkimpy's side of the differential ARC test (test/interop/arc-dkimpy.test.ts).

Reads one JSON request on stdin and writes one JSON reply on stdout (dkimpy
seals only with the authres package, which Debian does not install with it,
so the chains are sealed by mailauth and dkimpy is the verifier):

  {"now": SECONDS, "zone": {NAME: TXT}, "verify": [BASE64, ...]}
      reply: {"verified": [{"cv": "pass" | "fail" | "none", "detail": TEXT}, ...]}
      dkim.arc_verify() with the keys of "zone" as its dnsfunc.
"""
import base64
import json
import logging
import sys
import time

request = json.load(sys.stdin)
NOW = int(request["now"])
time.time = lambda: NOW

import dkim  # noqa: E402

logging.disable(logging.CRITICAL)


def verify(encoded, zone):
    def dnsfunc(name, timeout=5):
        text = zone.get(name.decode().rstrip(".").lower())
        return text.encode() if text is not None else None

    try:
        cv, results, detail = dkim.arc_verify(base64.b64decode(encoded), dnsfunc=dnsfunc)
    except Exception as error:
        return {"cv": "fail", "detail": str(error)}
    return {"cv": cv.decode() if isinstance(cv, bytes) else str(cv), "detail": str(detail)}


print(json.dumps({"verified": [verify(item, request["zone"]) for item in request["verify"]]}))
