"""A strict SDK replay judged as a tape test: the message ``regista test`` prints.

An agent in any language is tape-tested the same way: a strict replay serves its run, and
when the run is over the replay says whether the agent walked the recorded path. The
message names the file, the step, the field and the character where the run left it,
in the words the Python harness's tape tests use (``regista.testing``):

    golden.jsonl: diverged at step 2 (model call): messages[0].content[0].text: …

``regista test TRACES -- CMD`` prints it for each tape; ``GET /v1/replays/{id}`` answers
it as ``tape_failure``, which the TypeScript client's ``tapeTest`` fails with.
"""

from __future__ import annotations

from regista.server.sdk_replay import SdkReplay

__all__ = ["tape_failure"]


def tape_failure(replay: SdkReplay, label: str | None = None) -> str | None:
    """Why the run ``replay`` served fails as a tape test (``None``: it walked the path).

    Args:
        replay: A replay whose run is over.
        label: How the message names the recording (default: its file name).
    """
    trace = replay.trace
    label = label or (trace.path.name if trace.path is not None else "tape")
    div = replay.divergence
    if div is not None:
        step = div["step"]
        if replay.tape.calls and step > replay.tape.calls[-1].step:
            return (
                f"{label}: diverged at step {step} (model call): the run made more model calls "
                f"than the recording's {len(replay.tape)}"
            )
        detail = div.get("detail") or "the request differs"
        return f"{label}: diverged at step {step} (model call): {detail}{div.get('nearest', '')}"
    expected = replay.tape.expected()
    if expected is not None:
        return (
            f"{label}: diverged at step {expected.step} (end of run): the run made "
            f"{replay.tape.played} model calls; the recording made {len(replay.tape)}"
        )
    return None
