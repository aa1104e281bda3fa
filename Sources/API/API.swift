public enum APIModule {}
