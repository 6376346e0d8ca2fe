"""Building the package: setuptools (configured in pyproject.toml), plus one step. The project's built-in datasets,
prompts, configs and syllabi live in its top-level folders; the wheel carries copies of them inside the package, as
`ltm_harness/_shipped/<kind>/`, where `ltm_harness._resources` finds them once installed."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("datasets", "prompts", "configs", "syllabi")
# Caches, and data files users download themselves (ChapterBreak's), never go into the wheel.
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", ".gitignore", "chapterbreak_ctx_*")


class BuildWithShipped(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install finds them in the checkout
            return
        for kind in SHIPPED:
            target = Path(self.build_lib) / "ltm_harness" / "_shipped" / kind
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / kind, target, ignore=LEFT_OUT)


setup(cmdclass={"build_py": BuildWithShipped})
