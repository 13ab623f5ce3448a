"""The paper's claims, measured on the trained family: findings, verdicts and their statistics."""
