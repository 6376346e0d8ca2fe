"""Where MemoryAgentBench's files are fetched from, in one place: the hub dataset, the revision pinned, and each
file's sha256 and size bound. The data moved under the code more than once (REFERENCE.md 10.5: fields renamed,
sources removed, LongMemEval contexts de-duplicated), so a run must name the revision it read.

Not known offline: this machine cannot reach the hub, so the commit id of the revision and the files' sha256 could
not be read here. Until they are filled in (`REVISION` a 40-hex commit, each `SHA256` value a hex digest), the
download reads `main` and a file is kept when its structure reads as MemoryAgentBench's (a parquet file with the
split's columns); `LTM_MAB_REVISION` pins a commit and `LTM_MAB_SHA256=<digest>` (per run) requires a digest
meanwhile. Filling these in is all it takes to pin: nothing else names them."""

REPOSITORY = "ai-hyz/MemoryAgentBench"
REVISION = "main"  # to pin: the hub commit (40 hex) whose files are listed below
ENTITY2ID = "entity2id.json"
SHA256: dict[str, str | None] = {  # path in the repository -> sha256 of the file at REVISION (None: not known here)
    "data/Accurate_Retrieval-00000-of-00001.parquet": None,  # 66.6 MB in one snapshot
    "data/Test_Time_Learning-00000-of-00001.parquet": None,  # 3.95 MB
    "data/Long_Range_Understanding-00000-of-00001.parquet": None,  # 46.2 MB
    "data/Conflict_Resolution-00000-of-00001.parquet": None,  # 1.08 MB
    ENTITY2ID: None,  # 1.76 MB
}
MAX_BYTES = 512 << 20  # each file well under; a larger download is not the file
