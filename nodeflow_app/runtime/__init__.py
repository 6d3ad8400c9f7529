"""The generic kernel: graph model and normalizer, coercion, expressions, scheduler. No node type lives here."""
