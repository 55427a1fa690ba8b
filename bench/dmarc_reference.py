"""The reference for bench/dmarc.js: the simplest summary of DMARC aggregate
reports in Python's standard library (xml.etree, gzip, zipfile), over the
files of a directory. Prints one JSON line: messages, sources, failing
sources and messages, reports and duplicates. No enrichment, no hostile-file
caps: what a short script does."""
import gzip
import io
import json
import os
import sys
import xml.etree.ElementTree as ET
import zipfile


def documents(data):
    if data[:2] == b"\x1f\x8b":
        yield gzip.decompress(data)
    elif data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in archive.namelist():
                yield archive.read(name)
    else:
        yield data


def local(tag):
    return tag.rsplit("}", 1)[-1]


def child(element, name):
    for item in element:
        if local(item.tag) == name:
            return item
    return None


def text(element, *path):
    for name in path:
        element = child(element, name) if element is not None else None
    return element.text.strip() if element is not None and element.text else ""


def main(directory):
    sources = {}
    failing = {}
    seen = set()
    duplicates = 0
    messages = 0
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as handle:
            data = handle.read()
        for xml in documents(data):
            root = ET.fromstring(xml)
            metadata = child(root, "report_metadata")
            key = (text(metadata, "org_name"), text(metadata, "report_id"))
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            for record in root:
                if local(record.tag) != "record":
                    continue
                row = child(record, "row")
                ip = text(row, "source_ip")
                count = int(text(row, "count"))
                evaluated = child(row, "policy_evaluated")
                passed = text(evaluated, "dkim") == "pass" or text(evaluated, "spf") == "pass"
                messages += count
                sources[ip] = sources.get(ip, 0) + count
                if not passed:
                    failing[ip] = failing.get(ip, 0) + count
    print(json.dumps({
        "messages": messages,
        "sources": len(sources),
        "failing_sources": len(failing),
        "failing_messages": sum(failing.values()),
        "reports": len(seen),
        "duplicates": duplicates,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
