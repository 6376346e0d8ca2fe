"""Where the built-in datasets, prompts, configs and syllabi are: inside the installed package, or in a checkout.

In a checkout they are the project's top-level folders (`datasets/`, `prompts/`, `configs/`, `syllabi/`). A wheel
carries copies of them inside the package, as `ltm_harness/_shipped/<kind>/` (setup.py puts them there when the
wheel is built), so an installed harness finds them from any folder and never looks at a `datasets` folder that
belongs to someone else (such as HuggingFace's, installed in the same site-packages).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

Kind = Literal["datasets", "prompts", "configs", "syllabi"]
KINDS: tuple[Kind, ...] = ("datasets", "prompts", "configs", "syllabi")
PACKAGE_DIR = Path(__file__).resolve().parent
SHIPPED_DIR = PACKAGE_DIR / "_shipped"  # in an installed wheel
CHECKOUT_DIR = PACKAGE_DIR.parent  # the project's root, when running from a checkout


@lru_cache(maxsize=None)
def shipped(kind: Kind) -> Path:
    """The folder of the built-in `kind`: the wheel's copy when the package carries one, else the checkout's."""
    inside = SHIPPED_DIR / kind
    if inside.is_dir():
        return inside
    return CHECKOUT_DIR / kind if (CHECKOUT_DIR / "pyproject.toml").is_file() else inside
