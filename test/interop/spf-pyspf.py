"""pyspf's side of the differential SPF test (test/interop/spf-pyspf.test.ts).

Reads one JSON request on stdin and writes one JSON reply on stdout:

  {"server": ["127.0.0.1", PORT], "checks": [{"ip": IP, "sender": S, "helo": H}, ...]}
      reply: {"results": [{"result": R, "explanation": TEXT}, ...]}

pyspf (Debian python3-spf, the RFC 7208 reference implementation) asks the
test's DNS server through dnspython, the resolver it prefers, so both
implementations read the same zone from the same peer.
"""
import json
import sys

import dns.resolver
import spf

request = json.load(sys.stdin)
resolver = dns.resolver.Resolver(configure=False)
resolver.nameservers = [request["server"][0]]
resolver.port = request["server"][1]
resolver.lifetime = 5
dns.resolver.default_resolver = resolver

results = []
for check in request["checks"]:
    result, explanation = spf.check2(i=check["ip"], s=check["sender"], h=check["helo"])
    results.append({"result": result, "explanation": explanation})
json.dump({"results": results}, sys.stdout)
