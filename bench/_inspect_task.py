"""The elicitation workload through inspect_ai, for bench/bench_elicitation.py.

Run with an interpreter that has inspect_ai (its own venv: inspect_ai is no dependency of
this project): ``python _inspect_task.py PROMPTS.json BASE_URL EPOCHS CONNECTIONS LOG_DIR``.
Each prompt (system + user message) is one sample, asked EPOCHS times, one answer per request,
with at most CONNECTIONS requests in flight, against an OpenAI-compatible server. Prints one
JSON line: status, samples, seconds importing inspect_ai and seconds in eval().
"""

import json
import sys
import time

started = time.perf_counter()
from inspect_ai import Task, eval  # type: ignore[import-not-found]  # its own venv, not a dependency
from inspect_ai.dataset import Sample  # type: ignore[import-not-found]
from inspect_ai.solver import generate  # type: ignore[import-not-found]


def main() -> None:
    prompts_path, base_url, epochs, connections, log_dir = sys.argv[1:6]
    with open(prompts_path, encoding="utf-8") as handle:
        prompts = json.load(handle)
    dataset = [Sample(input=[{"role": "system", "content": p["system"]}, {"role": "user", "content": p["user"]}],
                      id=i) for i, p in enumerate(prompts)]
    task = Task(dataset=dataset, solver=generate(), epochs=int(epochs))
    imported = time.perf_counter()
    logs = eval(task, model="openai/fake", model_base_url=base_url, max_connections=int(connections),
                display="none", log_dir=log_dir, temperature=0.7, model_args={"responses_api": False})
    done = time.perf_counter()
    log = logs[0]
    print(json.dumps({"status": log.status, "samples": len(log.samples or []), "import": imported - started,
                      "eval": done - imported, "error": str(log.error) if log.error else None}))


if __name__ == "__main__":
    main()
