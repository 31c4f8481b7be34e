"""Mining proven bugs from pytorch/xla's own fixes: history.py (commits and their first releases),
triggers.py (the tests a fix changed, and what they need), bundle.py (a mined record's test made runnable),
mine.py (the batch: candidates, proof, records)."""
