"""Every value python-hl7 reads in the corpus, for the reader's test to compare against.

    python3 tests/hl7-corpus/python_hl7_values.py > tests/hl7-corpus/python-hl7-values.json

Needs python-hl7 0.4.5 (`pip install hl7==0.4.5`). Each file is split into messages the way
`mllp show` splits it: CR, LF and CRLF end a segment, blank lines are left out, a message starts
at each MSH, and batch envelope segments (FHS, BHS, BTS, FTS) belong to no message. For each
message: every field (`field`), repetition and component (`raw`) that has parts, as written, and every leaf python-hl7's
`extract_field` reaches, escape sequences decoded (`text`); or, where python-hl7 cannot read
the message at all, the exception it raises.
"""
import json
import os
import sys

import hl7

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["python-hl7", "hl7apy", "simple-hl7"]


def messages(text):
    lines = text.replace("\r\n", "\r").replace("\n", "\r").split("\r")
    out = []
    for line in lines:
        if not line.strip(" \t"):
            continue
        if line[:3] in ("FHS", "BHS", "BTS", "FTS"):
            continue
        if line[:3] == "MSH":
            out.append([line])
        elif out:
            out[-1].append(line)
        else:
            raise ValueError("a segment before the first MSH")
    return ["\r".join(m) for m in out]


def values(text):
    message = hl7.parse(text)
    seen = {}
    out = []
    for segment in message:
        name = str(segment[0])
        seen[name] = seen.get(name, 0) + 1
        k = seen[name]
        for f in range(1, len(segment)):
            field = segment[f]
            base = "%s(%d)-%d" % (name, k, f)
            if len(field) > 1:
                out.append([base, "field", str(field)])
            for r in range(1, len(field) + 1):
                rep = field[r - 1]
                components = len(rep) if isinstance(rep, hl7.Repetition) else 1
                if components > 1:
                    out.append(["%s(%d)" % (base, r), "raw", str(rep)])
                for c in range(1, components + 1):
                    comp = rep[c - 1] if isinstance(rep, hl7.Repetition) else rep
                    if isinstance(comp, hl7.Component) and len(comp) > 1:
                        out.append(["%s(%d).%d" % (base, r, c), "raw", str(comp)])
                    subs = len(comp) if isinstance(comp, hl7.Component) else 1
                    for s in range(1, subs + 1):
                        got = message.extract_field(name, k, f, r, c, s)
                        out.append(["%s(%d).%d.%d" % (base, r, c, s), "text", got])
    return out


def main():
    corpus = []
    seen = set()
    for source in SOURCES:
        folder = os.path.join(HERE, source)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".hl7", ".txt")):
                continue
            with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
                text = f.read()
            for i, m in enumerate(messages(text), 1):
                entry = {"file": "%s/%s" % (source, name), "message": i, "text": m}
                if m in seen:
                    # The same message as one before: its values are that one's.
                    entry["repeats"] = True
                    corpus.append(entry)
                    continue
                seen.add(m)
                try:
                    entry["values"] = values(m)
                except Exception as e:  # python-hl7 cannot read it: the test says so
                    entry["python_hl7_fails"] = type(e).__name__
                corpus.append(entry)
    # One message a line: a change to the corpus shows as the lines of its messages.
    sys.stdout.write('{"python-hl7": %s, "messages": [\n' % json.dumps(hl7.__version__))
    sys.stdout.write(",\n".join(json.dumps(m, ensure_ascii=False) for m in corpus))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()
