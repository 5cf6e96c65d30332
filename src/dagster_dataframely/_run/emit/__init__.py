"""Emission: what each outcome of a step writes, yields and raises."""
