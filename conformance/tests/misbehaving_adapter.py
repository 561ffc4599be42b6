"""A protocol adapter that misbehaves on purpose, one way per mode: ``python misbehaving_adapter.py MODE``.

It answers each scenario with a transcript built from the scenario alone (see :func:`transcript`), so the
tests can write the matching goldens; the mode decides what goes wrong. It imports nothing of the kit, like
an adapter written in another language.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

INFO = {"name": "misbehaving", "language": "python", "version": "0", "capabilities": ["wrappers"]}


def transcript(scenario: dict[str, Any]) -> str:
    """The transcript every well-behaved answer carries: canonical JSON text naming the scenario."""
    return json.dumps({"formatVersion": 1, "scenario": scenario["id"], "steps": {}}, separators=(",", ":"))


def answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(mode: str, state: str | None = None) -> int:
    if mode == "exit-at-once" or (state is not None and os.path.exists(state)):
        print("adapter: missing dependency", file=sys.stderr)
        return 3
    for line in sys.stdin:
        command = json.loads(line)
        if command["cmd"] == "start":
            if mode == "start-hang":
                time.sleep(60)
            elif mode == "start-garbage":
                sys.stdout.write("Welcome to the adapter!\n")
                sys.stdout.flush()
            elif mode == "wrong-version":
                answer({"version": 2, "implementation": INFO})
            elif mode == "start-crash":
                print("adapter: cannot initialise", file=sys.stderr)
                return 4
            else:
                answer({"version": 1, "implementation": INFO})
            continue
        if command["cmd"] == "stop":
            return 0
        seq, scenario = command["seq"], command["scenario"]
        marked = "bad" in scenario["id"]
        if state is not None:
            open(state, "w").close()  # from now on, every start fails
        if mode == "crash" or (mode == "crash-marked" and marked):
            print(f"adapter: segmentation fault in {scenario['id']}", file=sys.stderr)
            sys.stderr.flush()
            return 139
        if mode == "hang" or (mode == "hang-marked" and marked):
            print("adapter: thinking...", file=sys.stderr)
            sys.stderr.flush()
            time.sleep(60)
        elif mode == "garbage" or (mode == "garbage-marked" and marked):
            sys.stdout.write("Traceback (most recent call last): oops\n")
            sys.stdout.flush()
        elif mode == "wrong-seq":
            answer({"seq": seq + 1, "transcript": transcript(scenario)})
        elif mode == "answer-on-stderr":
            print(json.dumps({"seq": seq, "transcript": transcript(scenario)}), file=sys.stderr)
            sys.stderr.flush()
        elif mode == "noisy-stderr":
            print(f"adapter: running {scenario['id']}", file=sys.stderr)
            answer({"seq": seq, "transcript": transcript(scenario)})
        elif mode == "extra-key":
            answer({"seq": seq, "transcript": transcript(scenario), "note": "unexpected"})
        elif mode == "two-kinds":
            answer({"seq": seq, "transcript": transcript(scenario), "skipped": True, "message": "both"})
        elif mode == "transcript-object":
            answer({"seq": seq, "transcript": json.loads(transcript(scenario))})
        elif mode == "nan":
            sys.stdout.write(f'{{"seq": {seq}, "transcript": NaN}}\n')
            sys.stdout.flush()
        elif mode == "array":
            answer([seq, transcript(scenario)])  # type: ignore[arg-type]
        elif mode == "skip":
            answer({"seq": seq, "skipped": True, "message": "no cycles here", "issue_url": "https://example.org/1"})
        elif mode == "errored":
            answer({"seq": seq, "errored": True, "context": {"message": "boom", "traceback": "at line 1"}})
        elif mode == "wrong-transcript":
            answer({"seq": seq, "transcript": transcript({"id": "another"})})
        else:
            answer({"seq": seq, "transcript": transcript(scenario)})
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
