public enum MediaModule {}
