"""The game master: post → commands → apply → reply. The only place that joins forum and games."""
