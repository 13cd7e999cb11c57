"""Statistics that hold: tests, intervals, calibration of p into confidence, power. Imports nothing of ours."""
