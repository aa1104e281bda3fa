/// Pure parsers and serializers for every wire format Switchboard speaks.
public enum Wire {}
