public enum PlatformModule {}
