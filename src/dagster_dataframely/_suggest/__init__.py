"""Suggesting a schema from data: source, profile, key, rules, render, suggest, evaluate."""
