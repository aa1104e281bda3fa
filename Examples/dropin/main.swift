print("switchboard-dropin")
