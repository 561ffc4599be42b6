"""A protocol adapter that misbehaves on purpose, one way per mode: ``python misbehaving_adapter.py MODE``.

It answers each scenario with a transcript built from the scenario alone (see :func:`transcript`), so the
tests can write the matching goldens; the mode decides what goes wrong. It imports nothing of the kit, like
an adapter written in another language. Modes ending in ``-marked`` misbehave only on scenarios whose id
contains ``bad``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

INFO = {"name": "misbehaving", "language": "python", "version": "0", "capabilities": ["wrappers"]}

DEEP = 100_000
MILLION = 1_000_000
MANY = 10_000


#: The environment variable naming a file to which a hanging run appends its seq before it hangs.
HANGING_NOTICE = "MISBEHAVING_ADAPTER_HANGING_NOTICE"


def transcript(scenario: dict[str, Any]) -> str:
    """The transcript every well-behaved answer carries: canonical JSON text naming the scenario."""
    return json.dumps({"formatVersion": 1, "scenario": scenario["id"], "steps": {}}, separators=(",", ":"))


def answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def write_raw(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def deep_text(depth: int) -> str:
    """The JSON text of an array nested ``depth`` levels deep (no standard encoder can write one)."""
    return "[" * depth + "]" * depth


def deep_transcript(scenario: dict[str, Any]) -> str:
    """A transcript whose steps are a value 100,000 levels deep."""
    return transcript(scenario).replace('"steps":{}', '"steps":' + deep_text(DEEP))


def many_key_transcript(scenario: dict[str, Any], keys: int) -> str:
    """A transcript whose steps hold ``keys`` members."""
    steps = ",".join(f'"c{index}":{index}' for index in range(keys))
    return transcript(scenario).replace('"steps":{}', '"steps":{' + steps + "}")


def errored_answer(seq: int, extra: str) -> str:
    """An errored answer whose context holds ``extra`` (JSON text of any depth)."""
    return f'{{"seq": {seq}, "errored": true, "context": {{"message": "deep", "data": {extra}}}}}'


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
            elif mode == "unknown-capability":
                answer({"version": 1, "implementation": {**INFO, "capabilities": ["wrappers", "wrapers"]}})
            elif mode == "deep-start":
                write_raw(b'{"version": 1, "implementation": %s}\n' % deep_text(DEEP).encode())
            elif mode == "start-close-stdout":
                os.close(1)
                time.sleep(60)
            else:
                answer({"version": 1, "implementation": INFO})
            if mode == "deaf":
                time.sleep(60)  # reads no more commands, however long
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
            if HANGING_NOTICE in os.environ:  # a test waiting for the hang is told it has begun
                with open(os.environ[HANGING_NOTICE], "a", encoding="utf-8") as notice:
                    notice.write(f"{seq}\n")
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
        elif mode == "noisy-wrong" or (mode == "noisy-wrong-marked" and marked):
            print(f"adapter: warning while running {scenario['id']}", file=sys.stderr)
            sys.stderr.flush()
            answer({"seq": seq, "transcript": transcript({"id": "another"})})
        elif mode == "noisy-wrong-marked":
            print(f"adapter: all is well in {scenario['id']}", file=sys.stderr)
            sys.stderr.flush()
            answer({"seq": seq, "transcript": transcript(scenario)})
        elif mode == "stderr-flood":
            sys.stderr.write(f"adapter: start of {scenario['id']}\n" + "x" * 5_000_000 + "\nadapter: the end\n")
            sys.stderr.flush()
            answer({"seq": seq, "transcript": transcript({"id": "another"})})
        elif mode == "deep-transcript":
            answer({"seq": seq, "transcript": deep_transcript(scenario)})
        elif mode == "deep-context":
            write_raw(errored_answer(seq, deep_text(DEEP)).encode() + b"\n")
        elif mode == "deep-key":
            text = json.dumps(transcript(scenario))
            write_raw(f'{{"seq": {seq}, "transcript": {text}, "note": {deep_text(DEEP)}}}\n'.encode())
        elif mode in ("many-keys", "million-keys"):
            keys = MILLION if mode == "million-keys" else MANY
            answer({"seq": seq, "transcript": many_key_transcript(scenario, keys)})
        elif mode == "surrogate-transcript":
            answer({"seq": seq, "transcript": transcript(scenario).replace('"steps":{}', '"steps":{"t":"\ud800"}')})
        elif mode == "surrogate-context":
            answer({"seq": seq, "errored": True, "context": {"message": "bad text \ud800", "detail": ["\udfff"]}})
        elif mode == "invalid-utf8":
            write_raw(b'{"seq": %d, "transcript": "\xff\xfe"}\n' % seq)
        elif mode == "huge-line":
            write_raw(b'{"seq": %d, "transcript": "' % seq + b"x" * 100_000_000 + b'"}\n')
        elif mode == "seq-string":
            answer({"seq": str(seq), "transcript": transcript(scenario)})
        elif mode == "seq-float":
            answer({"seq": float(seq), "transcript": transcript(scenario)})
        elif mode == "seq-bool":
            answer({"seq": bool(seq), "transcript": transcript(scenario)})
        elif mode == "close-stdout":
            os.close(1)
            time.sleep(60)
        elif mode == "two-answers":
            line = json.dumps({"seq": seq, "transcript": transcript(scenario)}) + "\n"
            write_raw((line * 2).encode())
        elif mode == "half-line":
            write_raw(b'{"seq": %d, "transcr' % seq)
            time.sleep(60)
        elif mode == "exit-after-answer":
            answer({"seq": seq, "transcript": transcript(scenario)})
            return 0
        else:
            answer({"seq": seq, "transcript": transcript(scenario)})
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
