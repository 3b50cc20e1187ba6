"""A skill's script: if anything ever ran it, it would leave a marker file beside itself, which the tests look for."""

from pathlib import Path

Path(__file__).with_name("RAN").write_text("this script was run")
