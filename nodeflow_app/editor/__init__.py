"""The graph editor as plain Python (no reflex): catalog for the canvas, edit operations with undo, inspector fields."""
