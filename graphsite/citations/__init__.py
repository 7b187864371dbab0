"""Verified citations: offline integrity at every build (`integrity.py`, pure) and live link checks on request
(`live.py`, the only module here that talks HTTP; `cache.py`, `results.py`, `summary.py`)."""
