import { Refusal } from '../errors.ts'

export class UserExists extends Refusal {
  constructor() {
    super(409, 'User already exists')
  }
}

export class UserNotFound extends Refusal {
  constructor() {
    super(404, 'User not found')
  }
}

/** No such key, or one of another user's that the caller may not see. */
export class KeyNotFound extends Refusal {
  constructor() {
    super(404, 'Key not found')
  }
}
