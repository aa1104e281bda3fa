import CSQLite
public enum StoreModule {}
