#!/usr/bin/env python3
"""Recompute the hash chain test vectors of docs/hashchain.md, versions 2 and 3 (Python 3, standard library only)."""
import base64, datetime, hashlib, json, os, re, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = {"client_id", "attempt", "backoff_delay_s", "outcome", "clean_session", "recorded_at", "schema", "host_id",
          "stage", "attempt_id", "record_id", "device_seq", "failure_class", "reason_code", "ceiling_s", "session_present",
          "outbox_depth", "outbox_flushed", "inbound_redelivered", "inbound_duplicates", "outbox_dropped", "inbound_expired"}


def es6(x):  # ECMAScript Number.prototype.toString, as RFC 8785 writes numbers
    if isinstance(x, int):
        assert abs(x) <= 2**53, "integer beyond 2^53: no exact JCS form"
        x = float(x)
    if x == 0:
        return "0"
    m, _, e = repr(abs(x)).partition("e")  # repr: the shortest digits that read back as x
    i, _, f = m.partition(".")
    digits = (i + f).lstrip("0")
    n = len(i) + int(e or 0) - (len(i + f) - len(digits))  # x = 0.digits * 10**n
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * -n + digits
    else:
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if n > 0 else "-") + str(abs(n - 1))
    return ("-" if x < 0 else "") + s


def jcs(v):  # RFC 8785; not json.dumps(sort_keys=True): members sort by UTF-16 code units
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, (int, float)):
        return es6(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    keys = sorted(v, key=lambda k: k.encode("utf-16-be"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"


def no_duplicates(pairs):
    assert len({k for k, _ in pairs}) == len(pairs), "duplicate member"
    return dict(pairs)


def record_object(line):  # the object R serialises, from an input line
    obj = json.loads(line, object_pairs_hook=no_duplicates)
    envelope = None
    if isinstance(obj.get("audit"), dict):
        envelope = {k: v for k, v in obj.items() if k != "audit"}
        obj = obj["audit"]
    rec = {k: v for k, v in obj.items() if not (v is None and k in FIELDS)}  # null: absent
    if "device_id" in rec:
        rec["client_id"] = rec.pop("device_id")
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)", rec["recorded_at"])
    fraction, offset = (m[3] or "").rstrip("0"), m[4].upper()
    offset = "+00:00" if offset in ("Z", "-00:00") else offset
    rec["recorded_at"] = m[1] + "T" + m[2] + ("." + fraction if fraction else "") + offset
    return {"record": rec, "envelope": envelope} if envelope else {"record": rec}


def sha256(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def tree_hash(leaves):  # RFC 6962 Merkle tree hash
    if len(leaves) == 0:
        return sha256()
    if len(leaves) == 1:
        return leaves[0]
    k = 1 << ((len(leaves) - 1).bit_length() - 1)  # the largest power of two below the size
    return sha256(b"\x01", tree_hash(leaves[:k]), tree_hash(leaves[k:]))


# Ed25519 verification (RFC 8032), for the signed checkpoint.
P, L = 2**255 - 19, 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P


def point(b):
    y = int.from_bytes(b, "little")
    sign, y = y >> 255, y & (1 << 255) - 1
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * pow(2, (P - 1) // 4, P) % P
    assert y < P and (x * x - x2) % P == 0 and not (x == 0 and sign), "not a curve point"
    x = P - x if x & 1 != sign else x
    return (x, y, 1, x * y % P)


def add(p, q):
    a, b = (p[1] - p[0]) * (q[1] - q[0]) % P, (p[1] + p[0]) * (q[1] + q[0]) % P
    c, d = 2 * p[3] * q[3] * D % P, 2 * p[2] * q[2] % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def mul(s, p):
    q = (0, 1, 1, 0)
    while s:
        q, p, s = add(q, p) if s & 1 else q, add(p, p), s >> 1
    return q


def ed25519_verify(public, message, sig):
    s = int.from_bytes(sig[32:], "little")
    k = int.from_bytes(hashlib.sha512(sig[:32] + public + message).digest(), "little") % L
    lhs, rhs = mul(s, point((4 * pow(5, P - 2, P) % P).to_bytes(32, "little"))), add(point(sig[:32]), mul(k, point(public)))
    return s < L and (lhs[0] * rhs[2] - rhs[0] * lhs[2]) % P == 0 and (lhs[1] * rhs[2] - rhs[1] * lhs[2]) % P == 0


def check_signed_note(msg, vkey):  # a C2SP signed note, verifier key NAME+HASH+BASE64(0x01 || PUBLIC KEY)
    name, key_hash, key = vkey.split("+")
    key = base64.b64decode(key)
    assert key[0] == 1 and sha256(name.encode(), b"\n", key)[:4].hex() == key_hash, "bad verifier key"
    text, _, sigs = msg.rpartition("\n\n")
    for line in sigs.splitlines():
        signer, sig = line.removeprefix("\u2014 ").split(" ")
        sig = base64.b64decode(sig)
        if signer == name and sig[:4].hex() == key_hash:
            assert ed25519_verify(key[1:], (text + "\n").encode(), sig[4:]), "bad signature"
            return text + "\n"
    raise AssertionError("not signed by " + name)


# Version 3: B from a row's columns, one link per record, a tree leaf per segment of 64 records and per chain end.
OUTCOMES = ["connected", "backoff_wait", "rate_limited_wait", "attempt_failed", "refused", "disconnected", "gave_up",
            "stopped"]
STAGES, FAILURES = ["link", "address", "session"], ["transient", "auth", "config", "unsupported", "overload", "unknown"]


def uvarint(n):  # unsigned LEB128, as Go's binary.AppendUvarint writes it; an int64 as its 64-bit two's complement
    n, out = n & (2**64 - 1), b""
    while n >= 0x80:
        out, n = out + bytes([n & 0x7F | 0x80]), n >> 7
    return out + bytes([n])


def string(s):  # uvarint(length in bytes), then the UTF-8 bytes
    return uvarint(len(s.encode())) + s.encode()


def code(names, name):  # outcome, stage and failure_class codes count from 1 in the order of their lists
    return bytes([names.index(name) + 1])


OPTIONAL = [  # in flag order: bit 1 << (i + 1) of the flags says that OPTIONAL[i] is present, and its bytes follow
    ("schema", uvarint), ("device_seq", uvarint), ("reason_code", uvarint), ("ceiling_s", lambda v: struct.pack(">d", v)),
    ("session_present", lambda v: bytes([v])), ("outbox_depth", uvarint), ("outbox_flushed", uvarint), ("host_id", string),
    ("stage", lambda v: code(STAGES, v)), ("attempt_id", string), ("record_id", string),
    ("failure_class", lambda v: code(FAILURES, v)), ("extra", string), ("envelope", string),
    ("inbound_redelivered", uvarint), ("inbound_duplicates", uvarint),  # these joined after envelope: older B keeps its bytes
    ("outbox_dropped", uvarint), ("inbound_expired", uvarint)]  # and these after them


def record_bytes3(c, seq):  # B of the row whose columns are c (None for null) at seq of its chain
    present = [(1 << (i + 1), enc(c[name])) for i, (name, enc) in enumerate(OPTIONAL) if c[name] not in (None, "")]
    flags = int(c["clean_session"]) | sum(bit for bit, _ in present)  # bit 0: clean_session
    ns = c["recorded_at"] * 1000 + (c["recorded_at_ns"] or 0)  # the column recorded_at is in microseconds
    return (string(c["client_id"]) + uvarint(seq) + struct.pack(">qh", ns, c["recorded_offset_min"]) + uvarint(c["attempt"])
            + struct.pack(">d", c["backoff_delay_s"]) + code(OUTCOMES, c["outcome"]) + uvarint(flags)
            + b"".join(b for _, b in present) + string(c["source"]) + uvarint(c["line"]))


STRING = r'"(?:[^"\\]|\\.)*"'


def members(text):  # an object's members as written, whitespace outside strings removed: [(name, raw name, raw value)]
    text, out, depth, start = "".join(re.findall(STRING + r'|[^\s"]+', text)), [], 0, 1
    for m in re.finditer(STRING + r"|[\[\]{},]", text):
        depth += (m[0] in "{[") - (m[0] in "]}") if len(m[0]) == 1 else 0
        if (depth == 1 and m[0] == "," or depth == 0) and text != "{}":
            raw = re.match(STRING, text[start:])[0]
            out.append((json.loads(raw), raw, text[start + len(raw) + 1:m.start()]))
            start = m.end()
    return out


def columns(line, source, number):  # the columns of the row read from an input line, as the dataset holds them
    top = members(line)
    audit = [v for k, _, v in top if k == "audit" and v.startswith("{")]
    c = dict.fromkeys(FIELDS | {"recorded_at_ns", "recorded_offset_min", "extra", "envelope"}, None)
    extra, envelope = [], [(raw, v) for k, raw, v in top if k != "audit"] if audit else []
    for k, raw, v in members(audit[0]) if audit else top:
        if k in FIELDS or k == "device_id":
            c["client_id" if k == "device_id" else k] = json.loads(v)  # null: absent
        else:
            extra.append((raw, v))
    for name, ms in ("extra", extra), ("envelope", envelope):  # the device's text, not re-canonicalised
        c[name] = "{" + ",".join(raw + ":" + v for raw, v in ms) + "}" if ms else None
    at = r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))"
    m = re.fullmatch(at, c["recorded_at"])
    offset = int(m[8] + "1") * (int(m[9]) * 60 + int(m[10])) if m[8] else 0
    days = (datetime.date(int(m[1]), int(m[2]), int(m[3])) - datetime.date(1970, 1, 1)).days
    s = ((days * 24 + int(m[4])) * 60 + int(m[5]) - offset) * 60 + int(m[6])
    c["recorded_at"], ns = divmod(s * 10**9 + int((m[7] or "").ljust(9, "0")), 1000)  # microseconds, then nanoseconds
    c["recorded_at_ns"], c["recorded_offset_min"], c["source"], c["line"] = ns or None, offset, source, number
    return c


def leaf_rows(pos, n, seg):  # the rows of the first n whose links are leaves: a segment's last, or a chain's last
    return [i for i in range(n) if pos[i][1] % seg == seg - 1 or i == n - 1 or pos[i + 1][1] == 0]


def check3(v, note, vkey):
    seg = v["segment_len"]
    for d in v["datasets"]:
        pos = []  # (origin, seq, link) of each row, in storage order
        for row in d["rows"]:
            where = "v3 %s:%d" % (row["source"], row["line"])
            c = columns(row["input"], row["source"], row["line"])
            assert "columns" not in row or row["columns"] == c, where + ": columns"
            origin = v["log"] + "/" + c["client_id"]
            seq = pos[-1][1] + 1 if pos and pos[-1][0] == origin else 0
            assert seq > 0 or origin not in {o for o, _, _ in pos}, where + ": the chain's rows are not contiguous"
            assert origin == row["origin"] and seq == row["seq"], where + ": origin and seq"
            prev = pos[-1][2] if seq else sha256(b"stormaudit/chain/v3\n", origin.encode(), b"\n")
            assert seq or prev.hex() == d["genesis"][origin], where + ": genesis"
            B = record_bytes3(c, seq)
            assert B.hex() == row["B"], where + ": B"
            pos.append((origin, seq, sha256(b"\x02", prev, B)))
            assert pos[-1][2].hex() == row["link"], where + ": link"
        assert [i for i, row in enumerate(d["rows"]) if row["leaf"]] == leaf_rows(pos, len(pos), seg), "v3 leaf rows"
        for cp in d["checkpoints"]:  # a checkpoint of SIZE rows: each chain ends at the last of them
            n = cp["rows"]
            leaves = leaf_rows(pos, n, seg)
            assert leaves == cp["leaves"], "v3 %d rows: leaves" % n
            merkle = tree_hash([pos[i][2] for i in leaves])
            assert merkle.hex() == cp["merkle_root"], "v3 %d rows: merkle root" % n
            root = sha256(b"\x03", n.to_bytes(8, "big"), len(leaves).to_bytes(8, "big"), merkle)
            assert base64.b64encode(root).decode() == cp["root"], "v3 %d rows: root" % n
            body = "%s\n%d\n%s\n" % (v["log"], n, cp["root"])
            assert body == cp["checkpoint"], "v3 %d rows: checkpoint body" % n
    assert check_signed_note(note, vkey) == v["datasets"][1]["checkpoints"][-1]["checkpoint"], "v3 signed checkpoint"


def main():
    v = json.load(open(os.path.join(HERE, "vectors.json"), encoding="utf-8"))
    links, leaves = {}, []
    for row in v["rows"]:
        where = "%s:%d" % (row["source"], row["line"])
        R = jcs(dict(record_object(row["input"]), source={"file": row["source"], "line": row["line"]})).encode()
        assert R == row["R"].encode(), where + ": R"
        h = sha256(b"\x00", R)
        assert h.hex() == row["record_hash"], where + ": record hash"
        origin = v["log"] + "/" + json.loads(row["R"])["record"]["client_id"]
        assert origin == row["origin"] and row["seq"] == len(links.get(origin, [])), where + ": origin and seq"
        prev = links[origin][-1] if origin in links else sha256(b"stormaudit/chain/v1\n", origin.encode(), b"\n")
        link = sha256(prev, h)
        assert link.hex() == row["link"], where + ": link"
        links.setdefault(origin, []).append(link)
        L = link + row["seq"].to_bytes(8, "big") + origin.encode()
        assert L.hex() == row["leaf"], where + ": leaf input"
        leaves.append(sha256(b"\x00", L))
        assert leaves[-1].hex() == row["leaf_hash"], where + ": leaf hash"
    root = base64.b64encode(tree_hash(leaves)).decode()
    assert root == v["root"] and len(leaves) == v["tree_size"], "tree root"
    body = "%s\n%d\n%s\n" % (v["log"], len(leaves), root)
    assert body == v["checkpoint"], "checkpoint body"
    note = open(os.path.join(HERE, "checkpoint.note"), encoding="utf-8").read()
    vkey = open(os.path.join(HERE, "test.pub"), encoding="utf-8").read().strip()
    assert check_signed_note(note, vkey) == body, "signed checkpoint"
    v3 = json.load(open(os.path.join(HERE, "vectors3.json"), encoding="utf-8"))
    check3(v3, open(os.path.join(HERE, "checkpoint3.note"), encoding="utf-8").read(), vkey)
    print("OK")


if __name__ == "__main__":
    sys.exit(main())
