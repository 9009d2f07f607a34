"""The Strike of the Eagle battle model: exact odds, Monte Carlo, and the shared kernels."""
from soe_sim.battle.spec import Arm, Battle, BattleCard, Block, CardChoice, Deck, Withdraw
from soe_sim.battle.odds import BattleOdds, battle_odds, resolve, simulate_battles
from soe_sim.battle.decks import default_deck

__all__ = [
    "Arm", "Battle", "BattleCard", "BattleOdds", "Block", "CardChoice", "Deck", "Withdraw",
    "battle_odds", "default_deck", "resolve", "simulate_battles",
]
