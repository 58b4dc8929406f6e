// An Error with a cause that has a cause, each thrown in a function of its own so that each exception of the
// chain has its own innermost frame: what the Sentry intake and the error group page are checked against.

function readCard(): never {
  throw new TypeError('card is undefined')
}

function chargeCard(): never {
  try {
    readCard()
  } catch (cause) {
    throw new Error('payment declined', { cause })
  }
}

/** `checkout failed`, caused by `payment declined` (in chargeCard), caused by `card is undefined` (in readCard). */
export function failCheckoutWithCauses(): Error {
  try {
    chargeCard()
  } catch (cause) {
    return new Error('checkout failed', { cause })
  }
}
