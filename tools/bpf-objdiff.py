#!/usr/bin/env python3
"""Compare the code of two BPF objects function by function.

    tools/bpf-objdiff.py OLD.bpf.o NEW.bpf.o

For checking that a refactor (moving code between the files of src/bpf/)
leaves the program unchanged. Functions are matched by name, so a new order
of definitions does not count; call targets, function pointers and strings
are compared by what they name, not by offset, and the "file:line:" prefix
scx_bpf_error() puts in its messages is ignored. Exits 1 if any function
differs, and prints the first differing instructions of each.
"""
import re
import subprocess
import sys
import tempfile

OBJDUMP = "llvm-objdump-19"
OBJCOPY = "llvm-objcopy-19"
DATA_SECTIONS = (".data", ".rodata", ".rodata.str1.1")


def dump_section(obj, name):
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([OBJCOPY, f"--dump-section={name}={d}/s", obj, f"{d}/o"],
                           capture_output=True)
        return open(f"{d}/s", "rb").read() if r.returncode == 0 else b""


def functions(obj):
    lines = subprocess.run([OBJDUMP, "-dr", "--no-show-raw-insn", obj], check=True,
                           capture_output=True, text=True).stdout.split("\n")
    data = {s: dump_section(obj, s) for s in DATA_SECTIONS}
    sec, cur, code, syms = None, None, {}, {}
    for line in lines:
        if m := re.match(r"Disassembly of section (.*):", line):
            sec = m.group(1)
        elif m := re.match(r"([0-9a-f]+) <(.*)>:", line):
            if not m.group(2).startswith("LBB"):  # branch labels stay in their function
                cur = (sec, m.group(2))
                code[cur] = []
                syms.setdefault(sec, {})[int(m.group(1), 16) // 8] = m.group(2)
        elif (m := re.match(r"\s+(\d+):\t(.*)", line)) and cur:
            code[cur].append([int(m.group(1)), re.sub(r"<LBB[^>]*>", "", m.group(2).strip())])
        elif (m := re.match(r"\s+[0-9a-f]+:\s+(R_BPF\S+)\s+(.*)", line)) and cur:
            code[cur][-1].append(f"{m.group(1)} {m.group(2)}")
    text = syms.get(".text", {})
    out = {}
    for (sec, name), insns in code.items():
        norm = []
        for idx, asm, *rel in insns:
            if (m := re.match(r"call (-?0x[0-9a-f]+)$", asm)) and not rel:
                asm = f"call <{syms[sec].get(idx + 1 + int(m.group(1), 16), '?')}>"
            elif m and rel == ["R_BPF_64_32 .text"]:
                asm, rel = f"call <{text.get(int(m.group(1), 16) + 1, '?')}>", []
            elif (m := re.match(r"(r\d+) = (0x[0-9a-f]+) ll$", asm)) and rel:
                target, off = rel[0].split()[1], int(m.group(2), 16)
                if target == ".text":
                    asm, rel = f"{m.group(1)} = &<{text.get(off // 8, '?')}>", []
                elif target in data:
                    d = data[target]
                    s = d[off:d.find(b"\0", off)].decode(errors="replace")
                    s = re.sub(r"^[\w/.]+\.c:\d+: ", "FILE:LINE: ", s)
                    asm, rel = f'{m.group(1)} = "{s}"', []
            norm.append(asm + (" | " + " ".join(rel) if rel else ""))
        out[name] = norm
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = functions(sys.argv[1]), functions(sys.argv[2])
    print(f"functions: {len(a)} / {len(b)}, instructions: "
          f"{sum(map(len, a.values()))} / {sum(map(len, b.values()))}")
    bad = 0
    for name in sorted(set(a) | set(b)):
        if a.get(name) == b.get(name):
            continue
        bad += 1
        print(f"differs: {name} ({len(a.get(name, []))} / {len(b.get(name, []))} instructions)")
        shown = 0
        for i, (x, y) in enumerate(zip(a.get(name, []), b.get(name, []))):
            if x != y and shown < 6:
                print(f"  {i}: {x}  ->  {y}")
                shown += 1
    print(f"{bad} function(s) differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
