"""Data-side detectors (token, semantic, reasoning levels), the level cascade, decontamination."""
