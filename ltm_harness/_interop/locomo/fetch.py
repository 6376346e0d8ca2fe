"""LoCoMo's data file, fetched on first use into the user cache; never shipped (its licence is CC BY-NC 4.0).

* a file of the user's when the dataset is given one (`args: {data_file: PATH}`), else
* the cached copy (`$LTM_HARNESS_CACHE/locomo/locomo10.json`, default the platform's cache folder), else
* a download of the reference repository's `data/locomo10.json` (about 2.8 MB, plain JSON), at the commit that last
  changed it (2024-08-09), checked against its sha256 and then by the reader (`parse_locomo`); see
  `ltm_harness._authoring.datafiles` for the download's checks, progress and atomic move.

`LTM_LOCOMO_URL` names a mirror (the file's URL), `LTM_LOCOMO_SHA256` another expected sha256 (`none`: the
structure check alone decides, e.g. for a later version of the file). Offline, the error says where to put the
file by hand, or how to give one's own copy.
"""

from __future__ import annotations

from pathlib import Path

from ltm_harness._authoring.datafiles import RemoteFile, fetch_parsed, read_json
from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import problem
from ltm_harness._interop.locomo.data import LocomoData, parse_locomo

REPOSITORY = "https://github.com/snap-research/locomo"
COMMIT = "cbfbc1dba6bc53d00625212a0f22d55ffee7c1fc"  # "Cleaned and update QA code", the last change of the file
REMOTE = RemoteFile(
    dataset="locomo", name="locomo10.json",
    url=f"https://raw.githubusercontent.com/snap-research/locomo/{COMMIT}/data/locomo10.json",
    sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",  # 2,805,274 bytes
    max_bytes=64 << 20, max_json_bytes=64 << 20, env_prefix="LTM_LOCOMO", compression="none",
    own_copy="give your own copy with the dataset's `args: {data_file: PATH}`",
)


def load_locomo(data_file: Path | None = None, quiet: bool = False) -> LocomoData:
    """LoCoMo's samples: from `data_file` when given, else from the cache, else downloaded there first."""
    if data_file is None:
        return fetch_parsed(REMOTE, lambda raw, path: parse_locomo(raw, str(path)), quiet)
    path = Path(data_file).expanduser()
    why = problem(path, REMOTE.max_json_bytes)
    if why == "it does not exist":
        raise DefinitionError(f"locomo: the data file {path} is missing; download data/locomo10.json from "
                              f"{REPOSITORY} to {path}, or remove `data_file` from the locomo args to have it "
                              "downloaded on first use")
    if why is not None:
        raise DefinitionError(f"locomo: the data file {path} cannot be read ({why}); name LoCoMo's "
                              "data/locomo10.json itself, or remove `data_file` from the locomo args to have it "
                              "downloaded on first use")
    return parse_locomo(read_json(path, "none", REMOTE.max_json_bytes), str(path))

