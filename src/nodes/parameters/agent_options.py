"""Parameters: the agent nodes' option lists: each option is a (label, description) pair that the dialog and the
node description show, and its name is what KNIME saves in the settings."""

from __future__ import annotations

import knime.extension as knext

__all__ = ["ErrorOptions", "LimitOptions", "ToolErrorOptions"]


class LimitOptions(knext.EnumParameterOptions):
    FAIL = ("Fail", "The node fails (or, with the error column, ends the conversation with the error).")
    FINAL_ANSWER = (
        "Ask for a final answer",
        "The model is asked once more, without tools, to answer with what it has gathered.",
    )


class ErrorOptions(knext.EnumParameterOptions):
    FAIL = ("Fail", "The node fails when the run stops early: a model error, the iteration limit, a failing tool "
            "with 'Stop the run' below.")  # fmt: skip
    COLUMN = (
        "Error column",
        "The node succeeds and the conversation table gets an Error column; a run that stops early ends with a row "
        "holding only the error, after the messages exchanged so far.",
    )


class ToolErrorOptions(knext.EnumParameterOptions):
    MODEL = ("Tell the model", "The error goes back to the model as the tool's result, so it can recover.")
    FAIL = ("Stop the run", "The first failing tool call stops the run (see Error handling).")
