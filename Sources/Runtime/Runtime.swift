public enum RuntimeModule {}
