"""Read a floatscope .fstrace file with only the standard library and numpy (docs/trace-format.md)."""
import json, struct, sys, zlib
import numpy as np

def read_fstrace(path):
    buf = open(path, "rb").read()
    assert buf[:8] == b"FSTRACE\n", "not a floatscope trace"
    version, reserved = struct.unpack_from("<II", buf, 8)
    assert version <= 1, f"trace format {version} is newer than this reader"
    assert reserved == 0, "nonzero reserved field: not a trace this reader knows"
    records, p = [], 16
    while p + 8 <= len(buf):
        (n,) = struct.unpack_from("<Q", buf, p)
        if p + 12 + n > len(buf):
            break  # last record cut short: keep the complete ones
        blob = buf[p + 8 : p + 8 + n]
        assert zlib.crc32(blob) == struct.unpack_from("<I", buf, p + 8 + n)[0], f"corrupted record at byte {p}"
        (hl,) = struct.unpack_from("<Q", blob, 0)
        header = json.loads(blob[8 : 8 + hl])  # a safetensors header
        meta = header.pop("__metadata__")
        tensors = {name: np.frombuffer(blob, {"F32": "<f4", "I32": "<i4"}[t["dtype"]], int(np.prod(t["shape"])),
                                       8 + hl + t["data_offsets"][0]).reshape(t["shape"]) for name, t in header.items()}
        records.append({"kind": meta["kind"], **json.loads(meta["json"]), "tensors": tensors})
        p += 12 + n
    return records

if __name__ == "__main__":
    recs = read_fstrace(sys.argv[1])
    meta, steps = recs[0], [r for r in recs if r["kind"] == "step"]
    received = [s["tensors"]["blocks.0.attn.received"] for s in steps]  # per step: [key] (ARM canvases grow)
    print(meta["model"]["name"], meta["settings"]["sampler"], "steps", len(steps), "received", received[-1].shape,
          "complete" if recs[-1]["kind"] == "end" else "partial")
    for s in steps[:3]:
        print(s["step"], s["tensors"]["transferred"].tolist(), s["tokenStrings"], s["tensors"]["confidence"].round(3).tolist())
