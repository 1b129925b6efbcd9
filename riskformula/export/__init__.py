"""Exports of a fitted risk score: renderings of its declarative score card for where it is used."""
