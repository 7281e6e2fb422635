"""Eval logs written by inspect_ai itself, offline, with its mock model provider.

The mock model answers from a seeded random stream (a callable
``custom_outputs``), so answers differ by sample and epoch; some samples
raise in the solver (errored samples, kept in the log with their error).
inspect_ai estimates tokens with tiktoken, whose encoding file is fetched
from the network: the helper counts words instead (the only patch; it
changes no score).
"""

from __future__ import annotations

import random


def write_log(log_dir, *, n=24, epochs=3, seed=0, fail=(5,), log_format="eval", model="mock-a",
              p_right=0.6):
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelAPI, ModelOutput, get_model
    from inspect_ai.scorer import accuracy, match, stderr
    from inspect_ai.solver import solver

    async def words(self, text: str) -> int:
        return max(1, len(text.split()))

    ModelAPI.count_text_tokens = words  # offline: no tiktoken download
    draw = random.Random(seed)

    def answer(messages, tools, tool_choice, config):
        right = draw.random() < p_right
        return ModelOutput.from_content(model="mockllm", content="yes" if right else "no")

    @solver
    def flaky():
        async def solve(state, generate):
            if state.metadata.get("boom"):
                raise RuntimeError("tool crashed")
            return await generate(state)

        return solve

    samples = [
        Sample(input=f"question {i}", target="yes", id=f"q{i}",
               metadata={"passage": f"p{i // 4}", "boom": i in fail})
        for i in range(n)
    ]
    task = Task(
        dataset=samples, solver=[flaky()], scorer=match(), epochs=epochs,
        metrics=[accuracy(), stderr(cluster="passage"), stderr()], name="toy_qa",
    )
    mock = get_model(f"mockllm/{model}", custom_outputs=answer)
    [log] = inspect_eval(
        task, model=mock, log_dir=str(log_dir), fail_on_error=False, display="none",
        log_format=log_format, score=True,
    )
    return log.location
