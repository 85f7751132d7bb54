a = 'x\n' "y" r'\d' b'z' Rb'w' u'v' '''tri
'ple''' """q""" f'{x!r:>{w}}' f"{d["k"]}"
