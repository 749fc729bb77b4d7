#!/usr/bin/env python3
"""SASS of a kernel as the product builds it, on a machine without a GPU.

Compiles a kernel source with NVRTC (the library the daemon uses: nvcc's ptxas allocates
registers differently for the same source and options) and disassembles the cubin with CUDA
11.8's nvdisasm, the newest this machine can get (Debian 12 non-free's nvidia-cuda-toolkit,
unpacked, not installed: bench/lab/README.md). CUDA 13's cubins carry a newer ELF header layout;
its sm_90 code is the same, so the header is rewritten to the old layout for nvdisasm alone.
Prints ptxas's resource lines and, per loop (a backward branch), its instruction mix.

  bench/lab/sass.py OUT.sass kernels/matmul.cu $(cutune get matmul --shape S \\
      --table tables/nvidia-h200.json --json | jq -r '.compile_options[]') -Ikernels

NVDISASM: the nvdisasm binary (default /tmp/nvtk/x/usr/bin/nvdisasm).
"""
import collections
import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile


def nvrtc_cubin(source_path, options):
    lib = ctypes.CDLL(os.environ.get("NVRTC", "/usr/local/cuda/lib64/libnvrtc.so"))
    prog = ctypes.c_void_p()
    src = open(source_path, "rb").read()
    name = os.path.basename(source_path).encode()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, name, 0, None, None) != 0:
        sys.exit("sass: nvrtcCreateProgram failed")
    opts = [o.encode() for o in options] + [b"--ptxas-options=-v"]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit("sass: NVRTC failed:\n" + log.value.decode())
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw, log.value.decode()


def old_header(cubin):
    """The ELF header as CUDA 11.8 writes it for sm_90 (ABI version 7, e_flags 0x5a055a)."""
    b = bytearray(cubin)
    if b[:4] != b"\x7fELF" or b[4] != 2:
        sys.exit("sass: not a 64-bit ELF cubin")
    b[8] = 7
    struct.pack_into("<I", b, 0x30, 0x005A055A)
    return bytes(b)


def instructions(sass):
    """(address, text) of every instruction."""
    return [(int(m.group(1), 16), m.group(2)) for m in
            re.finditer(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", sass, re.M)]


def loops(sass, ins):
    """(start, end, instructions) of each backward branch's body, in address order."""
    label_at, pending = {}, []
    for line in sass.splitlines():
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/", line)
        if m:
            for label in pending:
                label_at[label] = int(m.group(1), 16)
            pending = []
    out = []
    for addr, text in ins:
        m = re.search(r"BRA.*`\((\.L_x_\d+)\)", text)
        if m and label_at.get(m.group(1), addr + 1) < addr:
            start = label_at[m.group(1)]
            out.append((start, addr, [t for a, t in ins if start <= a <= addr]))
    return out


def opcode(text):
    words = text.split()
    op = words[1] if words[0].startswith("@") else words[0]
    base = op.split(".")[0]
    return base if base in ("FFMA", "IMAD", "IADD3", "ISETP", "LEA", "MOV", "BAR", "BRA") else op


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, source, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    cubin, log = nvrtc_cubin(source, options)
    for line in log.splitlines():
        if "spill" in line or "Used" in line:
            print(line.strip())
    nvdisasm = os.environ.get("NVDISASM", "/tmp/nvtk/x/usr/bin/nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(old_header(cubin))
        f.flush()
        sass = subprocess.run([nvdisasm, "-c", f.name], check=True, capture_output=True,
                              text=True).stdout
    open(out, "w").write(sass)
    # nvdisasm 11.8 leaves some branch targets unlabelled; the span from the first FFMA to the
    # last holds every main loop whichever way its back edge is printed.
    ins = instructions(sass)
    ffmas = [i for i, (_, text) in enumerate(ins) if opcode(text) == "FFMA"]
    regions = loops(sass, ins)
    if ffmas:
        regions.append((ins[ffmas[0]][0], ins[ffmas[-1]][0],
                        [t for _, t in ins[ffmas[0]:ffmas[-1] + 1]], "FFMA span"))
    for start, end, body, *kind in regions:
        mix = collections.Counter(opcode(t) for t in body)
        ffma = mix["FFMA"]
        print(f"{kind[0] if kind else 'loop'} {start:#x}-{end:#x}: {len(body)} instructions, "
              f"FFMA {ffma} ({100 * ffma / len(body):.0f}%): " +
              ", ".join(f"{k} {v}" for k, v in mix.most_common(12)))


if __name__ == "__main__":
    main()
