"""Hostile inputs and faults, each run as a process under a memory and a time cap."""
