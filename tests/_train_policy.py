"""A policy for the bridge's test (tests/test_train_bridge.py), run by ``sample_bots.kit.policy`` in
a bot process: it plays the lowest legal action index and appends, for each decision, the digest
of every array of its observation dict to the file named by ``TRAIN_RECORD``."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np


def digest(observation: dict[str, Any]) -> str:
    """The arrays' bytes, key by key, hashed."""
    h = hashlib.sha256()
    for key in sorted(observation):
        array = np.ascontiguousarray(observation[key])
        h.update(key.encode() + str(array.dtype).encode() + str(array.shape).encode() + array.tobytes())
    return h.hexdigest()


def lowest(observation: dict[str, Any]) -> int:
    """The lowest legal index; the observation's digest recorded first."""
    legal = np.flatnonzero(observation["action_mask"])
    with open(os.environ["TRAIN_RECORD"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"digest": digest(observation), "legal": [int(i) for i in legal]}) + "\n")
    return int(legal[0])
