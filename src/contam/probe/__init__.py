"""Model-side detectors: log-prob family, Zero-CoT Probe, performance cliff, generation probes, code diagnostics."""
